#pragma once

#include "engine/common/result.h"

#include <QString>

namespace cw {

// Where a user's own data lives (XDG base directories through QStandardPaths): the history
// database and the folder for clause-head plugins they add. Uninstalling the program leaves
// all of it in place.
struct UserFolders {
    QString data; // ~/.local/share/Clausewright/Clausewright (AppDataLocation)
    QString historyDatabase; // data/history.sqlite (HistoryDatabase::defaultPath())
    QString plugins; // data/plugins: searched by PluginHost before the built-in plugins
};

UserFolders userFolders();

// Creates the data and plugin folders where they are missing (a first start); an error names
// the folder that could not be made.
Result<UserFolders> createUserFolders();

} // namespace cw
