#include "app/desktop/user_folders.h"

#include "app/history/history_database.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace cw {

UserFolders userFolders()
{
    UserFolders folders;
    folders.historyDatabase = HistoryDatabase::defaultPath();
    folders.data = QFileInfo(folders.historyDatabase).absolutePath();
    const QString appData = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    folders.plugins = QDir(appData.isEmpty() ? folders.data : appData).filePath("plugins");
    return folders;
}

Result<UserFolders> createUserFolders()
{
    const UserFolders folders = userFolders();
    for (const QString& path : { folders.data, folders.plugins }) {
        if (!QDir().mkpath(path))
            return makeError(
                "cannot create the folder " + QDir::toNativeSeparators(path).toStdString());
    }
    return folders;
}

} // namespace cw
