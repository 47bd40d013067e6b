#pragma once

#include "app/code_skills/code_skill.h"
#include "app/plugins/plugin_folders.h"

#include <QList>
#include <QStringList>

namespace cw {

// Finds and loads code skills: one YAML or JSON file per skill (*.yaml, *.yml, *.json).
// Folders searched, in order (pluginSearchFolders, as the clause-head host): the extra folders
// given, the user's skills folder (~/.local/share/Clausewright/Clausewright/code_skills), then
// the source tree's plugins/code_skills when running from the build tree, else the install's
// <prefix>/share/clausewright/code_skills. A skill found in an earlier folder hides a later one of
// the same name, so a user can replace a built-in skill. A file that cannot be read or parsed is
// reported in errors() (file, line, problem) and skipped; it never stops the others from loading.
class CodeSkillHost {
public:
    explicit CodeSkillHost(QStringList extraFolders = {});

    // Loads once; later calls return the same skills, sorted by name.
    const QList<CodeSkill>& skills();
    // The skill of that name, or null.
    const CodeSkill* skill(const QString& name);
    // The skills that take `language`; runnable test skills first.
    QList<CodeSkill> skillsFor(const QString& language);
    const QStringList& errors();
    QStringList searchFolders() const;
    // Loads again (the user dropped a file into the folder).
    void reload();

    static QString userFolder();
    static PluginFolderSpec folderSpec();
    static constexpr qint64 kMaxSkillFileBytes = 256 * 1024;

private:
    void load();

    QStringList m_extraFolders;
    QList<CodeSkill> m_skills;
    QStringList m_errors;
    bool m_loaded = false;
};

} // namespace cw
