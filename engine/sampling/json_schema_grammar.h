#pragma once

#include "engine/common/result.h"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace cw::sampling {

// Converts a JSON schema to a GBNF grammar (root rule "root") whose sentences are JSON texts
// valid under the schema. Supported subset:
//   type: object (properties, required, additionalProperties: false unless given true or a
//         schema), array (items, minItems, maxItems), string (enum, maxLength, minLength),
//         number, integer (minimum, maximum, exclusiveMinimum, exclusiveMaximum: enforced,
//         integer ranges are regular; on a "number" they are refused), boolean, null, or a list of
//         types; enum, const; anyOf / oneOf (as alternatives); $ref to "#/$defs/..." or
//         "#/definitions/..."; an empty schema or true accepts any JSON value.
// Properties appear in the order the schema lists them (hence ordered_json); optional ones
// may be left out.
// Whitespace between tokens is bounded (a space, or a newline and up to 8 spaces of indent)
// and numbers have at most 16 integer and 16 fraction digits, so that generation always
// ends. Anything outside the subset (format, pattern, uniqueItems, ...) is an error naming the
// JSON pointer where it occurs, rather than a constraint silently not enforced. A schema of
// more than 1,000 sub-schemas or enum values, nested deeper than 32, or whose grammar passes
// 1 MiB is refused: every such rule costs each token of each step it is decoded with.
Result<std::string> jsonSchemaToGbnf(const nlohmann::ordered_json& schema);
Result<std::string> jsonSchemaToGbnf(std::string_view schemaText);

} // namespace cw::sampling
