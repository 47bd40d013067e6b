#pragma once

#include "app/llm_review/llm_session.h"
#include "app/test_generation/skill_model.h"

#include <memory>

namespace cw {

// The in-process engine answering skills: the messages rendered with the model's chat
// template (thinking off: the answer is the code), submitted to the session's scheduler (the
// model's one, shared with reviews), so a skill's static prefix (the chat header and its
// system prompt, the same in every request) is prefilled once into the prefix cache and
// later requests fork it instead of prefilling it again. JSON skills decode under their
// schema's grammar.
class EngineSkillModel : public SkillModel {
public:
    explicit EngineSkillModel(std::shared_ptr<llm::LlmSession> session);

    QString name() const override { return m_session->name(); }
    Result<SkillModelAnswer> answer(const CodeSkill& skill, const SkillMessages& messages,
        const std::function<void(const QString& piece)>& onText,
        const std::function<bool()>& cancelled) override;

    // The prompt tokens as the model sees them (for tests and the context check).
    Result<std::vector<std::int32_t>> promptTokens(const SkillMessages& messages) const;
    const std::shared_ptr<llm::LlmSession>& session() const { return m_session; }

private:
    std::shared_ptr<llm::LlmSession> m_session;
};

} // namespace cw
