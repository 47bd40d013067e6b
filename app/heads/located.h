#pragma once

#include <QtGlobal>

namespace cw::heads {

// A value found in the text with its span [start, end) in UTF-16 offsets.
template <typename T> struct Located {
    T value;
    qsizetype start = 0;
    qsizetype end = 0;
};

} // namespace cw::heads
