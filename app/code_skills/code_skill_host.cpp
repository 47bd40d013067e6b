#include "app/code_skills/code_skill_host.h"

#include <QFile>
#include <QSet>
#include <algorithm>

namespace cw {

CodeSkillHost::CodeSkillHost(QStringList extraFolders)
    : m_extraFolders(std::move(extraFolders))
{
}

QString CodeSkillHost::userFolder()
{
    const QString base = userDataFolder();
    return base.isEmpty() ? QString() : base + QStringLiteral("/code_skills");
}

PluginFolderSpec CodeSkillHost::folderSpec()
{
    PluginFolderSpec spec;
    spec.userSubfolder = QStringLiteral("code_skills");
    spec.installSubfolder = QStringLiteral("share/clausewright/code_skills");
#ifdef CW_CODE_SKILLS_SOURCE_DIR
    spec.buildTreeFolder = QStringLiteral(CW_CODE_SKILLS_SOURCE_DIR);
#endif
    return spec;
}

QStringList CodeSkillHost::searchFolders() const
{
    return pluginSearchFolders(m_extraFolders, folderSpec());
}

void CodeSkillHost::load()
{
    m_loaded = true;
    m_skills.clear();
    m_errors.clear();
    QSet<QString> seen;
    const QSet<QString> suffixes { "yaml", "yml", "json" };
    const auto files = pluginFiles(searchFolders(),
        [&suffixes](const QFileInfo& file) { return suffixes.contains(file.suffix()); });
    for (const QFileInfo& info : files) {
        const QString path = info.absoluteFilePath();
        if (info.size() > kMaxSkillFileBytes) {
            m_errors.append(path + ": larger than 256 KB; not a skill file");
            continue;
        }
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            m_errors.append(path + ": cannot read (" + file.errorString() + ")");
            continue;
        }
        auto skill = parseCodeSkill(file.readAll(), path);
        if (!skill) {
            m_errors.append(QString::fromStdString(skill.error().message));
            continue;
        }
        if (seen.contains(skill->name))
            continue; // an earlier folder's skill of that name wins
        seen.insert(skill->name);
        m_skills.append(std::move(*skill));
    }
    std::sort(m_skills.begin(), m_skills.end(),
        [](const CodeSkill& a, const CodeSkill& b) { return a.name < b.name; });
}

const QList<CodeSkill>& CodeSkillHost::skills()
{
    if (!m_loaded)
        load();
    return m_skills;
}

const QStringList& CodeSkillHost::errors()
{
    if (!m_loaded)
        load();
    return m_errors;
}

void CodeSkillHost::reload()
{
    load();
}

const CodeSkill* CodeSkillHost::skill(const QString& name)
{
    for (const CodeSkill& s : skills()) {
        if (s.name == name)
            return &s;
    }
    return nullptr;
}

QList<CodeSkill> CodeSkillHost::skillsFor(const QString& language)
{
    QList<CodeSkill> out;
    for (const CodeSkill& s : skills()) {
        if (s.supports(language))
            out.append(s);
    }
    std::stable_sort(out.begin(), out.end(),
        [](const CodeSkill& a, const CodeSkill& b) { return a.runnableTests && !b.runnableTests; });
    return out;
}

} // namespace cw
