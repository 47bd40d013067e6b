#pragma once

#include "app/generation/remote_server.h"
#include "app/generation/text_generator.h"

namespace cw::generation {

// An OpenAI-compatible server over HTTP (Qt Network): every request is one streaming
// POST /v1/chat/completions, sent together so the server batches them; the answer's JSON
// Schema goes as response_format {"type": "json_schema", "json_schema": {...}}, which
// clausewright-server, vLLM, SGLang and llama.cpp's server all take. Thinking is turned off
// through chat_template_kwargs.enable_thinking. Runs its own event loop on the calling
// thread; a cancel aborts the open requests at once.
class RemoteGenerator : public TextGenerator {
public:
    explicit RemoteGenerator(RemoteServer server);

    QString name() const override;
    QString location() const override { return m_server.baseUrl; }
    QString kindName() const override { return QStringLiteral("remote server"); }
    std::int64_t contextLength() const override { return 0; }
    Result<std::int64_t> promptTokens(const std::vector<engine::ChatMessage>&) override
    {
        return std::int64_t(0);
    }
    Result<GenerationTotals> generate(std::span<GenerationRequest> requests,
        const std::function<bool()>& cancelled, const FinishedCallback& onFinished) override;

    bool lastPromptsTooLong() const override { return m_promptsTooLong; }

private:
    RemoteServer m_server;
    bool m_promptsTooLong = false;
};

} // namespace cw::generation
