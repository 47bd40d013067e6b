#pragma once

#include "app/plugins/clause_head.h"
#include "app/plugins/plugin_folders.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <memory>

namespace cw {

// A head ready to run, with where it came from.
struct LoadedHead {
    HeadMetadata metadata;
    QString origin; // the plugin file's path
    std::shared_ptr<const ClauseHead> head;
};

// Finds clause-head plugins (pluginSearchFolders: extra folders, the user's plugins folder,
// then the build tree's plugins/ or the install's lib/clausewright/plugins) and makes their
// heads. A plugin that fails to load, was built for another ABI or types version, has bad
// metadata or whose data fails to load is reported in errors() and skipped; a plugin whose
// id an earlier folder already gave is passed over, so a user's copy replaces a built-in one.
class PluginHost {
public:
    explicit PluginHost(QStringList extraFolders = {});

    // Loads everything once; later calls return the same heads.
    const QList<LoadedHead>& heads();
    // Heads of one kind ("fast", "llm") or all ("all").
    QList<LoadedHead> heads(const QString& kind);
    const QStringList& errors() const { return m_errors; }
    QStringList searchFolders() const;
    // For a review that found no head: which folders were searched, and why plugins there
    // were skipped.
    QString noHeadsMessage() const;

    static PluginFolderSpec folderSpec();

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

// A head's findings, less those of categories its metadata does not declare: each of those is
// dropped with a message naming the plugin and the category (also logged), so a head cannot
// slip a category past the playbook and the reports' category list. An llm head may also
// return the categories of the fast findings it was lent (it merges them with its own).
struct HeadRunResult {
    QList<Finding> findings;
    QStringList dropped;
};
Result<HeadRunResult> runHead(const LoadedHead& head, const Document& document,
    const QList<Clause>& clauses, const HeadRunContext& context);

} // namespace cw
