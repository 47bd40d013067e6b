// Fuzzes RequestFramer: the bytes are a connection's input. Fed at once and fed in pieces
// (split where the first byte says) they must give the same state, consumption and
// normalized request; a complete request's body never passes the limit.
#include "app/server/request_framing.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace cw::server;
    if (size < 1 || size > 65536)
        return 0;
    const std::size_t step = std::size_t(data[0] % 16) + 1;
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    FramingLimits limits;
    limits.maxBodyBytes = 512;
    limits.maxHeadBytes = 2048;
    limits.maxRequestLineBytes = 256;

    RequestFramer whole(limits);
    whole.scan(input);
    RequestFramer pieces(limits);
    for (std::size_t n = 0; n < input.size();) {
        n = std::min(input.size(), n + step);
        const auto state = pieces.scan(input.substr(0, n));
        if (state == RequestFramer::State::Complete || state == RequestFramer::State::Refused)
            break;
    }
    const bool sameState = whole.state() == pieces.state()
        || (whole.state() == RequestFramer::State::Refused
            && pieces.state() == RequestFramer::State::Refused);
    if (!sameState) {
        std::fprintf(stderr, "whole and pieces disagree: %d vs %d\n", int(whole.state()),
            int(pieces.state()));
        std::abort();
    }
    if (whole.state() == RequestFramer::State::Complete) {
        const std::string normalized = whole.normalized(input);
        if (whole.consumed() != pieces.consumed() || normalized != pieces.normalized(input)
            || whole.consumed() > input.size())
            std::abort();
        const auto headEnd = normalized.find("\r\n\r\n");
        if (headEnd == std::string::npos || normalized.size() - headEnd - 4 > limits.maxBodyBytes)
            std::abort();
    }
    if (whole.state() == RequestFramer::State::Refused && whole.refusal().message.empty())
        std::abort();
    return 0;
}
