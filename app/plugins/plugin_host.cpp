#include "app/plugins/plugin_host.h"

#include "app/plugins/llm_head.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLibrary>
#include <QLoggingCategory>
#include <QPluginLoader>
#include <QSet>

namespace cw {

Q_LOGGING_CATEGORY(lcHeadPlugins, "clausewright.plugins")

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
    for (const QJsonValue& v : json.value("categories").toArray()) {
        if (!v.isString() || v.toString().isEmpty())
            return makeError(w + ": metadata field 'categories' holds a value that is not a name");
        m.categories.append(v.toString());
    }
    if (json.contains("data") && !json.value("data").isString())
        return makeError(w + ": metadata field 'data' must be a file or folder name");
    m.data = json.value("data").toString();
    return m;
}

PluginHost::PluginHost(QStringList extraFolders)
    : m_extraFolders(std::move(extraFolders))
{
}

PluginFolderSpec PluginHost::folderSpec()
{
    PluginFolderSpec spec;
    spec.userSubfolder = QStringLiteral("plugins");
    spec.installSubfolder = QStringLiteral("lib/clausewright/plugins");
#ifdef CW_PLUGIN_BUILD_DIR
    spec.buildTreeFolder = QStringLiteral(CW_PLUGIN_BUILD_DIR);
#endif
    return spec;
}

QStringList PluginHost::searchFolders() const
{
    return pluginSearchFolders(m_extraFolders, folderSpec());
}

QString PluginHost::noHeadsMessage() const
{
    QString message = QStringLiteral("no clause-head plugin could be loaded; searched ")
        + searchFolders().join(QStringLiteral(", "))
        + QStringLiteral(" (reinstall Clausewright, or build the plugins in the build tree)");
    if (!m_errors.isEmpty())
        message += QStringLiteral("; skipped: ") + m_errors.join(QStringLiteral("; "));
    return message;
}

void PluginHost::loadFile(const QString& path)
{
    QPluginLoader loader(path);
    const QJsonObject meta = loader.metaData();
    if (meta.isEmpty()) {
        m_errors.append(path + ": not a Qt plugin (" + loader.errorString() + ")");
        return;
    }
    const QString iid = meta.value("IID").toString();
    if (!iid.startsWith(QLatin1String(CW_HEAD_PLUGIN_IID_PREFIX)))
        return; // another kind of plugin: not ours to judge
    if (iid != QLatin1String(CW_CLAUSE_HEAD_FACTORY_IID)) {
        m_errors.append(path + ": "
            + versionMismatchMessage(QStringLiteral("head plugin ABI"),
                iid.mid(qsizetype(sizeof(CW_HEAD_PLUGIN_IID_PREFIX) - 1)),
                QStringLiteral(CW_HEAD_STRINGIFY(CW_HEAD_PLUGIN_ABI_VERSION)))
            + QStringLiteral(" (rebuild it against this version's Head SDK)"));
        return;
    }
    auto metadata = headMetadataFromJson(meta.value("MetaData").toObject(), path);
    if (!metadata) {
        m_errors.append(QString::fromStdString(metadata.error().message));
        return;
    }
    for (const LoadedHead& h : m_heads) {
        if (h.metadata.id == metadata->id)
            return; // an earlier folder (extra, user) wins
    }
    HeadSetup setup { *metadata, path, {} };
    if (!metadata->data.isEmpty()) {
        setup.dataPath = QDir::cleanPath(QFileInfo(path).dir().absoluteFilePath(metadata->data));
        if (!QFileInfo::exists(setup.dataPath)) {
            m_errors.append(path + ": its data " + setup.dataPath
                + " (the metadata's 'data') is missing; reinstall the plugin");
            return;
        }
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
    if (const int types = factory->typesVersion(); types != kHeadTypesVersion) {
        m_errors.append(path + ": "
            + versionMismatchMessage(QStringLiteral("head SDK types version"),
                QString::number(types), QString::number(kHeadTypesVersion))
            + QStringLiteral(" (rebuild it against this version's Head SDK)"));
        return;
    }
    auto head = factory->createHead(setup);
    if (!head) {
        m_errors.append(path + ": " + QString::fromStdString(head.error().message));
        return;
    }
    if (!*head) {
        m_errors.append(path + ": the plugin made no head");
        return;
    }
    m_heads.append({ *metadata, path, std::shared_ptr<const ClauseHead>(std::move(*head)) });
}

void PluginHost::loadAll()
{
    const auto files = pluginFiles(searchFolders(),
        [](const QFileInfo& file) { return QLibrary::isLibrary(file.absoluteFilePath()); });
    for (const QFileInfo& file : files)
        loadFile(file.absoluteFilePath());
    for (const QString& error : m_errors)
        qCWarning(lcHeadPlugins).noquote() << "plugin skipped:" << error;
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

Result<HeadRunResult> runHead(const LoadedHead& head, const Document& document,
    const QList<Clause>& clauses, const HeadRunContext& context)
{
    auto found = head.head->find(document, clauses, context);
    if (!found)
        return found.error();
    HeadRunResult run;
    QSet<QString> declared(head.metadata.categories.begin(), head.metadata.categories.end());
    // An llm head merging its findings with the fast heads' returns theirs too: those were
    // checked against their own heads' metadata already.
    if (context.llm) {
        for (const Finding& f : context.llm->fastFindings)
            declared.insert(f.category);
    }
    QSet<QString> reported;
    for (Finding& f : *found) {
        if (declared.contains(f.category)) {
            run.findings.append(std::move(f));
            continue;
        }
        if (reported.contains(f.category))
            continue; // one message per category, however many findings it had
        reported.insert(f.category);
        const QString message = QStringLiteral("%1 (%2) reported category \"%3\", which its "
                                               "metadata does not declare; its findings of that "
                                               "category are dropped")
                                    .arg(head.metadata.id, head.origin, f.category);
        qCWarning(lcHeadPlugins).noquote() << message;
        run.dropped.append(message);
    }
    return run;
}

} // namespace cw
