#pragma once

#include <QFileInfo>
#include <QList>
#include <QString>
#include <QStringList>
#include <functional>

namespace cw {

// Where plugins of one kind are found. The clause-head host and the code-skill host both
// search through this, so a user, an install and a build tree look the same to both:
//   1. the extra folders given (tests, --plugins),
//   2. the user's folder, ~/.local/share/Clausewright/Clausewright/<userSubfolder>,
//   3. when the program runs from its build tree: `buildTreeFolder`;
//      otherwise the install's folder, <prefix>/<installSubfolder>, the prefix being the
//      folder above the executable's bin/.
// A build tree never reads an install's plugins and an install never reads the build tree it
// was made from: each finds the plugins built with it.
struct PluginFolderSpec {
    QString userSubfolder; // "plugins", "code_skills"
    QString installSubfolder; // "lib/clausewright/plugins", "share/clausewright/code_skills"
    QString buildTreeFolder; // absolute; empty: none
};

// ~/.local/share/Clausewright/Clausewright: the GUI's AppDataLocation, spelled out so that the
// CLI, whatever its own application name, reads the same folder. Empty where there is no home.
QString userDataFolder();

// Whether the executable lies inside the build tree it was compiled in (CW_BUILD_TREE_DIR);
// true as well without a QCoreApplication (a plain test binary).
bool runsFromBuildTree();

QStringList pluginSearchFolders(const QStringList& extraFolders, const PluginFolderSpec& spec);

// Every file of the folders that `accept` takes: folder by folder in the order given, by name
// inside one. Folders that do not exist are passed over.
QList<QFileInfo> pluginFiles(
    const QStringList& folders, const std::function<bool(const QFileInfo&)>& accept);

// What both hosts say of a plugin made for another version of its interface ("built for head
// plugin ABI 1, but this Clausewright loads head plugin ABI 2; ..."); the caller puts the file
// (and line) in front.
QString versionMismatchMessage(const QString& what, const QString& found, const QString& expected);

} // namespace cw
