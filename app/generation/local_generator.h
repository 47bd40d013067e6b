#pragma once

#include "app/generation/text_generator.h"
#include "app/llm_review/llm_session.h"

#include <memory>

namespace cw::generation {

// The in-process engine: renders each conversation with the model's chat template and
// decodes all requests in one batch (their shared prefix prefilled once), each under its
// grammar. Holds the session's lock while it generates.
class LocalGenerator : public TextGenerator {
public:
    explicit LocalGenerator(std::shared_ptr<llm::LlmSession> session);

    QString name() const override { return m_session->name(); }
    QString location() const override { return m_session->path(); }
    QString kindName() const override { return QStringLiteral("in-process"); }
    std::int64_t contextLength() const override { return m_session->contextLength(); }
    Result<std::int64_t> promptTokens(const std::vector<engine::ChatMessage>& messages) override;
    Result<GenerationTotals> generate(std::span<GenerationRequest> requests,
        const std::function<bool()>& cancelled, const FinishedCallback& onFinished) override;

private:
    Result<std::string> render(const GenerationRequest& request) const;

    std::shared_ptr<llm::LlmSession> m_session;
};

} // namespace cw::generation
