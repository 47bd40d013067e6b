#include "app/test_generation/skill_model.h"

namespace cw {

Result<SkillModelAnswer> ScriptedSkillModel::answer(const CodeSkill&, const SkillMessages& messages,
    const std::function<void(const QString& piece)>& onText, const std::function<bool()>& cancelled)
{
    m_prompts.append(messages);
    if (m_prompts.size() > m_answers.size())
        return makeError("the script has no answer " + std::to_string(m_prompts.size()));
    const QString& text = m_answers[m_prompts.size() - 1];
    SkillModelAnswer answer;
    constexpr int kPiece = 16;
    for (qsizetype at = 0; at < text.size(); at += kPiece) {
        if (cancelled && cancelled()) {
            answer.cancelled = true;
            return answer;
        }
        const QString piece = text.mid(at, kPiece);
        answer.text += piece;
        if (onText)
            onText(piece);
    }
    answer.generatedTokens = text.size() / 4;
    return answer;
}

} // namespace cw
