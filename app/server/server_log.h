#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace cw::server {

// One JSON object per line on stderr ({"ts": ..., "level": ..., "event": ..., fields}), so
// journald keeps each event whole and `journalctl -o cat | jq` can filter them. Lines from
// several threads never interleave.
void logEvent(std::string_view level, std::string_view event, nlohmann::json fields = {});

} // namespace cw::server
