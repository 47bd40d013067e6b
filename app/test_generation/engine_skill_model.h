#pragma once

#include "app/llm_review/llm_session.h"
#include "app/test_generation/skill_model.h"

#include <memory>

namespace cw::engine {
class RequestScheduler;
}

namespace cw {

// The in-process engine answering skills: the messages rendered with the model's chat
// template (thinking off: the answer is the code), decoded by a RequestScheduler kept for
// the life of this object, so a skill's static prefix (the chat header and its system
// prompt, the same in every request) is prefilled once into a copy-on-write root that later
// requests fork instead of prefilling it again. JSON skills decode under their schema's
// grammar. Holds the session's lock only while it answers (reviews may use the model in
// between); the cached root keeps one state slot.
class EngineSkillModel : public SkillModel {
public:
    explicit EngineSkillModel(std::shared_ptr<llm::LlmSession> session);
    ~EngineSkillModel() override;

    QString name() const override { return m_session->name(); }
    Result<SkillModelAnswer> answer(const CodeSkill& skill, const SkillMessages& messages,
        const std::function<void(const QString& piece)>& onText,
        const std::function<bool()>& cancelled) override;

    // The prompt tokens as the model sees them (for tests and the context check).
    Result<std::vector<std::int32_t>> promptTokens(const SkillMessages& messages) const;
    const std::shared_ptr<llm::LlmSession>& session() const { return m_session; }

private:
    std::shared_ptr<llm::LlmSession> m_session;
    std::unique_ptr<engine::RequestScheduler> m_scheduler;
};

} // namespace cw
