#pragma once

#include "app/generation/text_generator.h"
#include "app/llm_review/llm_session.h"

#include <memory>

namespace cw::generation {

// The in-process engine: renders each conversation with the model's chat template and
// submits every request to the session's scheduler at once (continuous batching; a prefix
// the prompts share is prefilled once and forked from the prefix cache), each under its
// grammar. Answers are reported on the calling thread as they end.
class LocalGenerator : public TextGenerator {
public:
    explicit LocalGenerator(std::shared_ptr<llm::LlmSession> session);

    QString name() const override { return m_session->name(); }
    QString location() const override { return m_session->path(); }
    QString kindName() const override { return QStringLiteral("in-process"); }
    QString device() const override
    {
        return QString::fromStdString(m_session->model().deviceName());
    }
    std::int64_t contextLength() const override { return m_session->contextLength(); }
    Result<std::int64_t> promptTokens(const std::vector<engine::ChatMessage>& messages) override;
    Result<GenerationTotals> generate(std::span<GenerationRequest> requests,
        const std::function<bool()>& cancelled, const FinishedCallback& onFinished) override;

private:
    Result<std::vector<std::int32_t>> promptIds(const GenerationRequest& request) const;

    std::shared_ptr<llm::LlmSession> m_session;
};

} // namespace cw::generation
