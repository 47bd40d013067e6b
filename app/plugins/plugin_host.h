#pragma once

#include "app/plugins/clause_head.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <memory>

namespace cw {

// A head ready to run, with where it came from.
struct LoadedHead {
    HeadMetadata metadata;
    QString origin; // plugin file path, or "built-in"
    std::shared_ptr<const ClauseHead> head;
};

// Finds clause-head plugins and makes their heads. Folders searched, in order: the extra
// folders given, the user folder (QStandardPaths AppDataLocation/plugins), the install
// folder (<prefix>/lib/clausewright/plugins beside the executable) and the build folder
// (CW_PLUGIN_BUILD_DIR). A plugin that fails to load, does not implement the interface,
// has bad metadata or whose data fails to load is reported in errors() and skipped. The
// built-in heads (compiled into the app) stand in for any built-in plugin not found.
class PluginHost {
public:
    explicit PluginHost(QStringList extraFolders = {});

    // Loads everything once; later calls return the same heads.
    const QList<LoadedHead>& heads();
    // Heads of one kind ("fast", "llm") or all ("all").
    QList<LoadedHead> heads(const QString& kind);
    const QStringList& errors() const { return m_errors; }
    QStringList searchFolders() const;

    // The folder holding a built-in head's data file when running from a build tree or an
    // install without the plugin folder ("cuad_classifier" -> .../plugins/cuad_classifier).
    static QString builtInDataFolder(const QString& headId);

private:
    void loadAll();
    void loadFile(const QString& path);

    QStringList m_extraFolders;
    QList<LoadedHead> m_heads;
    QStringList m_errors;
    bool m_loaded = false;
};

// Parses a plugin's JSON metadata object; errors name the field.
Result<HeadMetadata> headMetadataFromJson(const QJsonObject& json, const QString& where);

} // namespace cw
