#include "app/server/api_keys.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace cw::server {

namespace {

constexpr std::size_t kMinKeyLength = 16;

std::string trimmed(const std::string& line)
{
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos)
        return {};
    const auto last = line.find_last_not_of(" \t\r");
    return line.substr(first, last - first + 1);
}

std::string octal(unsigned mode)
{
    char text[8];
    std::snprintf(text, sizeof text, "%04o", mode & 07777u);
    return text;
}

} // namespace

bool constantTimeEquals(std::string_view a, std::string_view b)
{
    // Walks the longer of the two whole, so a wrong length costs as much as a wrong byte.
    const std::size_t n = std::max(a.size(), b.size());
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
        const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
        diff |= static_cast<unsigned char>(x ^ y);
    }
    // Keeps the compiler from turning the loop back into an early exit.
    volatile unsigned char result = diff;
    return result == 0;
}

Result<ApiKeys> ApiKeys::fromFile(const std::string& path)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return Error { "API key file " + path + ": cannot be read (does it exist?)" };
    if (!S_ISREG(st.st_mode))
        return Error { "API key file " + path + ": not a regular file" };
    if ((st.st_mode & 077) != 0)
        return Error { "API key file " + path + ": mode " + octal(st.st_mode)
            + " lets group or others read it; run chmod 600 " + path };
    if (st.st_uid != ::geteuid())
        return Error { "API key file " + path + ": owned by another user (uid "
            + std::to_string(st.st_uid) + ")" };
    std::ifstream in(path);
    if (!in)
        return Error { "API key file " + path + ": cannot be opened" };
    std::vector<std::string> keys;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        const std::string key = trimmed(line);
        if (key.empty() || key[0] == '#')
            continue;
        if (key.size() < kMinKeyLength)
            return Error { "API key file " + path + ", line " + std::to_string(number)
                + ": a key needs at least 16 characters (try: openssl rand -hex 32)" };
        if (key.find_first_of(" \t") != std::string::npos)
            return Error { "API key file " + path + ", line " + std::to_string(number)
                + ": a key cannot contain spaces" };
        keys.push_back(key);
    }
    if (keys.empty())
        return Error { "API key file " + path + ": holds no key" };
    return fromKeys(std::move(keys));
}

ApiKeys ApiKeys::fromKeys(std::vector<std::string> keys)
{
    ApiKeys out;
    out.m_keys = std::move(keys);
    return out;
}

bool ApiKeys::accepts(std::string_view key) const
{
    // Every key is compared, so the time does not say which one (or whether one) matched.
    bool found = false;
    for (const std::string& k : m_keys)
        found |= constantTimeEquals(k, key);
    return found;
}

bool ApiKeys::acceptsAuthorization(std::string_view header) const
{
    // RFC 9110: the scheme is case-insensitive ("bearer" is "Bearer"), then one or more
    // spaces, then the token. A key never holds spaces or control bytes (fromFile refuses
    // them), so a value that does is refused whole rather than compared in part.
    constexpr std::string_view kBearer = "bearer";
    if (header.size() <= kBearer.size())
        return false;
    for (std::size_t i = 0; i < kBearer.size(); ++i)
        if ((header[i] | 0x20) != kBearer[i])
            return false;
    std::string_view key = header.substr(kBearer.size());
    if (key.front() != ' ')
        return false;
    while (!key.empty() && key.front() == ' ')
        key.remove_prefix(1);
    for (unsigned char c : key)
        if (c <= 0x20 || c == 0x7F)
            return false;
    return !key.empty() && accepts(key);
}

} // namespace cw::server
