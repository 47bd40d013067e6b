#include "engine/common/bounded_json.h"

#include <string>
#include <unordered_set>
#include <vector>

namespace cw {

namespace {

using Json = nlohmann::ordered_json;

// A SAX handler that builds the value itself (nlohmann's parser is iterative; its own DOM
// builder is not what is slow, ordered_map's lookup on insert is).
class BoundedBuilder {
public:
    BoundedBuilder(Json& root, JsonLimits limits)
        : m_root(root)
        , m_limits(limits)
    {
    }

    bool null() { return value(nullptr); }
    bool boolean(bool v) { return value(v); }
    bool number_integer(Json::number_integer_t v) { return value(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
    bool number_float(Json::number_float_t v, const Json::string_t&) { return value(v); }
    bool string(Json::string_t& v) { return value(std::move(v)); }
    bool binary(Json::binary_t&) { return false; } // JSON text has none

    bool start_object(std::size_t) { return open(Json::object()); }
    bool start_array(std::size_t) { return open(Json::array()); }
    bool end_object()
    {
        m_open.pop_back();
        m_keys.pop_back();
        return true;
    }
    bool end_array()
    {
        m_open.pop_back();
        m_keys.pop_back();
        return true;
    }

    bool key(Json::string_t& k)
    {
        if (!m_keys.back().insert(k).second) {
            const std::string shown = k.size() > 40 ? k.substr(0, 37) + "..." : k;
            m_error = "has the key '" + shown + "' twice in one object";
            return false;
        }
        // Appended to the object's vector as is: ordered_map's own insert would first look
        // through every member for the key.
        auto& members = m_open.back()->get_ref<Json::object_t&>();
        members.emplace_back(std::move(k), nullptr);
        m_slot = &members.back().second;
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e)
    {
        // nlohmann's message says where and what ("invalid UTF-8 byte at index 12: 0xFF");
        // a number too large for a double ("1e999") is out_of_range, not parse_error.
        std::string what = e.what();
        if (const auto bracket = what.find("] "); bracket != std::string::npos)
            what = what.substr(bracket + 2);
        m_error = "is not valid JSON: " + what;
        return false;
    }

    const std::string& error() const { return m_error; }

private:
    Json* place(Json&& v)
    {
        if (m_open.empty()) {
            m_root = std::move(v);
            return &m_root;
        }
        Json& parent = *m_open.back();
        if (parent.is_array()) {
            auto& items = parent.get_ref<Json::array_t&>();
            items.push_back(std::move(v));
            return &items.back();
        }
        *m_slot = std::move(v);
        return m_slot;
    }
    bool value(Json&& v)
    {
        place(std::move(v));
        return true;
    }
    bool open(Json&& container)
    {
        if (m_open.size() >= m_limits.maxDepth) {
            m_error = "is nested more than " + std::to_string(m_limits.maxDepth) + " levels deep";
            return false;
        }
        // Only the innermost open container grows, so pointers to the outer ones stay valid.
        m_open.push_back(place(std::move(container)));
        m_keys.emplace_back();
        return true;
    }

    Json& m_root;
    JsonLimits m_limits;
    std::vector<Json*> m_open;
    std::vector<std::unordered_set<std::string>> m_keys; // per open container (arrays: empty)
    Json* m_slot = nullptr; // the member whose key came last
    std::string m_error;
};

} // namespace

Result<nlohmann::ordered_json> parseBoundedJson(std::string_view text, JsonLimits limits)
{
    Json root;
    BoundedBuilder builder(root, limits);
    bool ok = false;
    try {
        ok = Json::sax_parse(text.begin(), text.end(), &builder);
    } catch (const Json::exception& e) {
        return Error { std::string("is not valid JSON: ") + e.what() };
    }
    if (!ok)
        return Error { builder.error().empty() ? std::string("is not valid JSON")
                                               : builder.error() };
    return root;
}

} // namespace cw
