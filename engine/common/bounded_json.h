#pragma once

// JSON from an untrusted client, read in time and stack proportional to its size: no nesting
// deeper than a limit (a 140 KB body of 65,000 '[' used to overflow the stack wherever the
// value was walked, dumped or echoed in an error), no key twice in one object (which of two
// values counts is a parser's whim), and object members appended in order rather than
// looked up one by one (nlohmann's ordered_json insert is linear: 160,000 keys took 20 s).

#include "engine/common/result.h"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace cw {

struct JsonLimits {
    std::size_t maxDepth = 64; // objects and arrays inside one another
};

// Errors, to follow the field's name: "is not valid JSON: <nlohmann's words, with the byte
// index>", "is nested more than 64 levels deep" or "has the key 'k' twice in one object".
Result<nlohmann::ordered_json> parseBoundedJson(std::string_view text, JsonLimits limits = {});

} // namespace cw
