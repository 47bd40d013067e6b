#pragma once

#include <cstddef>
#include <string>

namespace cw::server {

// "4 MiB", "64 KiB" or "1000 bytes": a limit as a person would write it.
inline std::string describeBytes(std::size_t bytes)
{
    if (bytes % (1u << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes % (1u << 10) == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

} // namespace cw::server
