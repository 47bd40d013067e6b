#pragma once

#include <cstddef>

namespace cw {

// A byte range [begin, end) of a text.
struct TextSpan {
    std::size_t begin = 0;
    std::size_t end = 0;
};

} // namespace cw
