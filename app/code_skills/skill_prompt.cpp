#include "app/code_skills/skill_prompt.h"

#include <QFileInfo>

namespace cw {

SkillValues skillValues(const CodeSkill& skill, const SkillRequest& request)
{
    SkillValues values;
    values.insert("code", request.code);
    values.insert("language", request.language);
    values.insert("framework", skill.frameworks.value(request.language));
    values.insert("file_name", request.fileName);
    values.insert("module_name", QFileInfo(request.fileName).completeBaseName());
    values.insert("existing_tests", request.existingTests);
    values.insert("errors", request.errors);
    values.insert("uncovered_lines", request.uncoveredLines);
    return values;
}

SkillMessages renderSkillMessages(const CodeSkill& skill, const SkillRequest& request)
{
    const SkillValues values = skillValues(skill, request);
    const QString& user = request.repair && !skill.repairTemplate.isEmpty() ? skill.repairTemplate
                                                                            : skill.userTemplate;
    return { renderSkillTemplate(skill.systemTemplate, values).trimmed(),
        renderSkillTemplate(user, values).trimmed() };
}

} // namespace cw
