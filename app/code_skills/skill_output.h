#pragma once

#include "app/code_skills/code_skill.h"

#include <QJsonObject>
#include <QString>

namespace cw {

// What a skill's answer holds once read with its output parser.
struct SkillAnswer {
    QString text; // the whole answer, thinking removed
    QString code; // FencedCode: the block's contents
    QJsonObject json; // Json: the object
};

// Reads a model's answer with the skill's parser. A Qwen "<think>...</think>" part is left
// out first. Errors say what was expected ("the answer has no ``` code block").
Result<SkillAnswer> parseSkillOutput(const CodeSkill& skill, const QString& answer);

// The answer without a leading <think>...</think> block (or an unclosed one's text).
QString withoutThinking(const QString& answer);

} // namespace cw
