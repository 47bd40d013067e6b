#pragma once

#include "app/code_skills/code_skill.h"
#include "app/code_skills/skill_template.h"

#include <QString>

namespace cw {

// One request to a skill: the code (or text) and what the earlier rounds left to do.
struct SkillRequest {
    QString code;
    QString language; // python, cpp, javascript, typescript, go, text
    QString fileName; // the code's file name as the tests will import it ("pricing.py")
    QString existingTests; // tests already there (the user's, or kept from earlier rounds)
    QString errors; // why the last round's tests failed or did not build
    QString uncoveredLines; // lines of the code no kept test runs, "12-14, 20"
    bool repair = false; // a later round: the skill's repair template when it has one
};

struct SkillMessages {
    QString system;
    QString user;
};

// The placeholder values for a request: {framework} from the skill's frameworks for the
// language, {module_name} the file name without its extension.
SkillValues skillValues(const CodeSkill& skill, const SkillRequest& request);

// The system and user messages (before the chat template).
SkillMessages renderSkillMessages(const CodeSkill& skill, const SkillRequest& request);

} // namespace cw
