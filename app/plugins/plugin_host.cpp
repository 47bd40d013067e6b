#include "app/plugins/plugin_host.h"

#include "app/heads/builtin_heads.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLibrary>
#include <QPluginLoader>
#include <QSet>
#include <QStandardPaths>

namespace cw {

QString headKindName(HeadKind kind)
{
    return kind == HeadKind::Llm ? QStringLiteral("llm") : QStringLiteral("fast");
}

Result<HeadMetadata> headMetadataFromJson(const QJsonObject& json, const QString& where)
{
    const std::string w = where.toStdString();
    HeadMetadata m;
    m.id = json.value("id").toString();
    m.name = json.value("name").toString();
    m.version = json.value("version").toString();
    if (m.id.isEmpty())
        return makeError(w + ": metadata field 'id' is missing or not a string");
    if (m.name.isEmpty())
        return makeError(w + ": metadata field 'name' is missing or not a string");
    const QString kind = json.value("kind").toString();
    if (kind == "fast")
        m.kind = HeadKind::Fast;
    else if (kind == "llm")
        m.kind = HeadKind::Llm;
    else
        return makeError(w + ": metadata field 'kind' must be \"fast\" or \"llm\", not \""
            + kind.toStdString() + "\"");
    if (!json.value("categories").isArray())
        return makeError(w + ": metadata field 'categories' must be an array of category names");
    for (const QJsonValue& v : json.value("categories").toArray())
        m.categories.append(v.toString());
    return m;
}

PluginHost::PluginHost(QStringList extraFolders)
    : m_extraFolders(std::move(extraFolders))
{
}

QStringList PluginHost::searchFolders() const
{
    QStringList folders = m_extraFolders;
    const QString user = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    if (!user.isEmpty())
        folders.append(QDir(user).filePath("plugins"));
    if (QCoreApplication::instance()) {
        const QDir bin(QCoreApplication::applicationDirPath());
        folders.append(QDir::cleanPath(bin.filePath("../lib/clausewright/plugins")));
        folders.append(QDir::cleanPath(bin.filePath("../plugins")));
    }
#ifdef CW_PLUGIN_BUILD_DIR
    folders.append(QStringLiteral(CW_PLUGIN_BUILD_DIR));
#endif
    folders.removeDuplicates();
    return folders;
}

QString PluginHost::builtInDataFolder(const QString& headId)
{
    QStringList candidates;
#ifdef CW_PLUGIN_BUILD_DIR
    candidates.append(QStringLiteral(CW_PLUGIN_BUILD_DIR));
#endif
    if (QCoreApplication::instance()) {
        const QDir bin(QCoreApplication::applicationDirPath());
        candidates.append(bin.filePath("../lib/clausewright/plugins"));
        candidates.append(bin.filePath("../share/clausewright/plugins/" + headId));
    }
#ifdef CW_RESOURCE_DIR
    candidates.append(QStringLiteral(CW_RESOURCE_DIR "/../plugins/") + headId);
#endif
    for (const QString& c : candidates) {
        const QDir dir(c);
        if (dir.exists() && !dir.entryList({ headId + ".*" }, QDir::Files).isEmpty())
            return QDir::cleanPath(dir.absolutePath());
    }
    return {};
}

void PluginHost::loadFile(const QString& path)
{
    QPluginLoader loader(path);
    const QJsonObject meta = loader.metaData();
    if (meta.isEmpty()) {
        m_errors.append(path + ": not a Qt plugin (" + loader.errorString() + ")");
        return;
    }
    if (meta.value("IID").toString() != QLatin1String(CW_CLAUSE_HEAD_FACTORY_IID))
        return; // another kind of plugin (code skills): not ours to judge
    auto metadata = headMetadataFromJson(meta.value("MetaData").toObject(), path);
    if (!metadata) {
        m_errors.append(QString::fromStdString(metadata.error().message));
        return;
    }
    for (const LoadedHead& h : m_heads) {
        if (h.metadata.id == metadata->id)
            return; // an earlier folder (user, extra) wins
    }
    QObject* root = loader.instance();
    if (!root) {
        m_errors.append(path + ": cannot load the plugin (" + loader.errorString() + ")");
        return;
    }
    auto* factory = qobject_cast<ClauseHeadFactory*>(root);
    if (!factory) {
        m_errors.append(path + ": the plugin does not implement " CW_CLAUSE_HEAD_FACTORY_IID);
        return;
    }
    std::unique_ptr<ClauseHead> head = factory->createHead();
    if (!head) {
        m_errors.append(path + ": the plugin made no head");
        return;
    }
    if (auto loaded = head->load(QFileInfo(path).absolutePath()); !loaded) {
        m_errors.append(path + ": " + QString::fromStdString(loaded.error().message));
        return;
    }
    m_heads.append({ *metadata, path, std::shared_ptr<const ClauseHead>(std::move(head)) });
}

void PluginHost::loadAll()
{
    for (const QString& folder : searchFolders()) {
        const QDir dir(folder);
        if (!dir.exists())
            continue;
        for (const QFileInfo& file : dir.entryInfoList(QDir::Files, QDir::Name)) {
            if (QLibrary::isLibrary(file.absoluteFilePath()))
                loadFile(file.absoluteFilePath());
        }
    }
    // Built-in heads stand in for their plugins when those were not found.
    for (auto& builtIn : heads::makeBuiltInHeads()) {
        const HeadMetadata meta = builtIn->metadata();
        bool present = false;
        for (const LoadedHead& h : m_heads)
            present = present || h.metadata.id == meta.id;
        if (present)
            continue;
        const QString data = builtInDataFolder(meta.id);
        if (auto loaded = builtIn->load(data); !loaded) {
            m_errors.append(
                "built-in head " + meta.id + ": " + QString::fromStdString(loaded.error().message));
            continue;
        }
        m_heads.append({ meta, QStringLiteral("built-in"),
            std::shared_ptr<const ClauseHead>(std::move(builtIn)) });
    }
}

const QList<LoadedHead>& PluginHost::heads()
{
    if (!m_loaded) {
        m_loaded = true;
        loadAll();
    }
    return m_heads;
}

QList<LoadedHead> PluginHost::heads(const QString& kind)
{
    QList<LoadedHead> out;
    for (const LoadedHead& h : heads()) {
        if (kind == "all" || headKindName(h.metadata.kind) == kind)
            out.append(h);
    }
    return out;
}

} // namespace cw
