#pragma once

#include "engine/common/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace cw::server {

// The bearer tokens a server accepts, read from a file that only its owner may read: one key
// a line, blank lines and lines starting with '#' ignored. Keys are compared in constant time
// (the time does not depend on how much of a guess matches).
class ApiKeys {
public:
    // Errors: the file is missing or empty, is readable or writable by group or others, is
    // owned by another user, or holds a key shorter than 16 characters.
    static Result<ApiKeys> fromFile(const std::string& path);
    static ApiKeys fromKeys(std::vector<std::string> keys);

    bool empty() const { return m_keys.empty(); }
    std::size_t size() const { return m_keys.size(); }
    // Checks an Authorization header value ("Bearer KEY").
    bool acceptsAuthorization(std::string_view header) const;
    bool accepts(std::string_view key) const;

private:
    std::vector<std::string> m_keys;
};

// Equal in time that depends only on the lengths.
bool constantTimeEquals(std::string_view a, std::string_view b);

} // namespace cw::server
