#pragma once

#include <cstdint>

namespace cw::engine {

// The KV pool Model::create sizes when ModelOptions::maxKvTokens is 0, in tokens: on a GPU
// (allocated at load) two full contexts plus 1,024 tokens for each further sequence; on the
// CPU (allocated as sequences grow) up to eight contexts of at least 4,096 tokens. Apart so
// that a memory plan can be shown before a model is loaded (Model Settings).
constexpr std::int64_t defaultKvPoolTokens(std::int64_t context, int maxSequences, bool gpu)
{
    if (gpu)
        return 2 * context + 1024 * std::int64_t(maxSequences - 1);
    return 8 * (context > 4096 ? context : 4096);
}

} // namespace cw::engine
