// Fuzzes parseCompletionRequest, the server's reader of /v1/chat/completions and
// /v1/completions bodies. The first byte picks the endpoint; the rest is the body. A parsed
// request must hold what the parser promises (non-empty messages or prompt, sane ranges).
#include "app/server/openai_request.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace cw::server;
    if (size < 1 || size > 16384)
        return 0;
    const Endpoint endpoint = (data[0] & 1) ? Endpoint::Completions : Endpoint::ChatCompletions;
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    auto request = parseCompletionRequest(body, endpoint);
    if (!request) {
        if (request.error().message.empty())
            std::abort(); // every refusal says why
        return 0;
    }
    const auto& p = request->params;
    const bool sane = p.temperature >= 0 && p.temperature <= 2 && p.topP > 0 && p.topP <= 1
        && p.maxTokens >= 0 && p.stopStrings.size() <= 4
        && (endpoint == Endpoint::Completions ? !request->prompt.empty()
                                              : !request->messages.empty());
    if (!sane) {
        std::fprintf(
            stderr, "accepted an out-of-range request: %.*s\n", int(body.size()), body.data());
        std::abort();
    }
    return 0;
}
