#include "app/plugins/plugin_folders.h"

#include <QCoreApplication>
#include <QDir>
#include <QStandardPaths>

namespace cw {

QString userDataFolder()
{
    const QString base = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return base.isEmpty() ? QString() : base + QStringLiteral("/Clausewright/Clausewright");
}

bool runsFromBuildTree()
{
#ifdef CW_BUILD_TREE_DIR
    if (!QCoreApplication::instance())
        return true;
    const QString tree = QDir::cleanPath(QStringLiteral(CW_BUILD_TREE_DIR)) + QLatin1Char('/');
    return QDir::cleanPath(QCoreApplication::applicationDirPath()).startsWith(tree);
#else
    return false;
#endif
}

QStringList pluginSearchFolders(const QStringList& extraFolders, const PluginFolderSpec& spec)
{
    QStringList folders;
    for (const QString& extra : extraFolders)
        folders.append(QDir::cleanPath(QDir(extra).absolutePath()));
    if (const QString user = userDataFolder(); !user.isEmpty())
        folders.append(user + QLatin1Char('/') + spec.userSubfolder);
    if (runsFromBuildTree()) {
        if (!spec.buildTreeFolder.isEmpty())
            folders.append(QDir::cleanPath(spec.buildTreeFolder));
    } else if (QCoreApplication::instance()) {
        const QDir bin(QCoreApplication::applicationDirPath());
        folders.append(
            QDir::cleanPath(bin.filePath(QStringLiteral("../") + spec.installSubfolder)));
    }
    folders.removeDuplicates();
    return folders;
}

QList<QFileInfo> pluginFiles(
    const QStringList& folders, const std::function<bool(const QFileInfo&)>& accept)
{
    QList<QFileInfo> files;
    for (const QString& folder : folders) {
        const QDir dir(folder);
        if (!dir.exists())
            continue;
        for (const QFileInfo& file : dir.entryInfoList(QDir::Files, QDir::Name)) {
            if (accept(file))
                files.append(file);
        }
    }
    return files;
}

QString versionMismatchMessage(const QString& what, const QString& found, const QString& expected)
{
    return QStringLiteral("built for %1 %2, but this Clausewright loads %1 %3; update the plugin "
                          "for this version")
        .arg(what, found, expected);
}

} // namespace cw
