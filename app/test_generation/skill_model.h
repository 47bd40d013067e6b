#pragma once

#include "app/code_skills/code_skill.h"
#include "app/code_skills/skill_prompt.h"

#include <QString>
#include <functional>

namespace cw {

struct SkillModelAnswer {
    QString text;
    bool cancelled = false;
    std::int64_t promptTokens = 0;
    std::int64_t reusedPromptTokens = 0; // taken from an earlier request's prefilled prefix
    std::int64_t generatedTokens = 0;
};

// What answers a code skill's prompts: the in-process engine (EngineSkillModel) or, in
// tests, a script of prepared answers (ScriptedSkillModel). Called on a worker thread.
class SkillModel {
public:
    virtual ~SkillModel() = default;
    virtual QString name() const = 0;
    // Answers one prompt with the skill's sampling, stop sequences and (for JSON skills) its
    // schema; `onText` gets the answer as it is written. `cancelled` is polled every step.
    virtual Result<SkillModelAnswer> answer(const CodeSkill& skill, const SkillMessages& messages,
        const std::function<void(const QString& piece)>& onText,
        const std::function<bool()>& cancelled)
        = 0;
};

// Prepared answers, one per call in order (a test that fails to build, then one that fails,
// then one that passes); streamed in small pieces like a model's. Past the last answer it
// fails. Keeps every prompt it was given.
class ScriptedSkillModel : public SkillModel {
public:
    explicit ScriptedSkillModel(QStringList answers)
        : m_answers(std::move(answers))
    {
    }
    QString name() const override { return QStringLiteral("scripted"); }
    Result<SkillModelAnswer> answer(const CodeSkill& skill, const SkillMessages& messages,
        const std::function<void(const QString& piece)>& onText,
        const std::function<bool()>& cancelled) override;
    const QList<SkillMessages>& prompts() const { return m_prompts; }

private:
    QStringList m_answers;
    QList<SkillMessages> m_prompts;
};

} // namespace cw
