#include "engine/sampling/json_schema_grammar.h"

#include "engine/common/bounded_json.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

namespace cw::sampling {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 32;
constexpr int64_t kMaxCount = 10000; // maxLength, minItems, ...
// The size of a schema the engine takes. Each property or alternative is a grammar rule the
// matcher may try at every token of every step, for every request decoded with it, so a
// schema far larger than any answer needs is refused rather than slowing the whole batch.
constexpr int64_t kMaxSchemaNodes = 1000; // sub-schemas: properties, items, alternatives
constexpr int64_t kMaxEnumValues = 1000; // enum values, all enums together
constexpr std::size_t kMaxGrammarBytes = 1u << 20;
// JSON integers the grammar writes have at most 16 digits (json-integer).
constexpr int64_t kLargestInteger = 9999999999999999;

// The shared primitive rules, added to the output on first use.
const std::map<std::string, std::string>& primitives()
{
    static const std::map<std::string, std::string> p = {
        { "ws", R"(| " " | "\n" " "{0,8})" },
        { "json-char", R"([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))" },
        { "json-string", R"("\"" json-char* "\"")" },
        { "json-integer", R"("-"? ( "0" | [1-9] [0-9]{0,15} ))" },
        { "json-number",
            R"("-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?)" },
        { "json-boolean", R"("true" | "false")" },
        { "json-null", R"("null")" },
        { "json-value",
            R"(json-object | json-array | json-string | json-number | json-boolean | json-null)" },
        { "json-object",
            R"("{" ws ( json-string ws ":" ws json-value ws ( "," ws json-string ws ":" ws json-value ws )* )? "}")" },
        { "json-array", R"("[" ws ( json-value ws ( "," ws json-value ws )* )? "]")" },
    };
    return p;
}

const std::map<std::string, std::vector<std::string>>& primitiveDeps()
{
    static const std::map<std::string, std::vector<std::string>> d = {
        { "json-string", { "json-char" } },
        { "json-value",
            { "json-object", "json-array", "json-string", "json-number", "json-boolean",
                "json-null" } },
        { "json-object", { "ws", "json-string", "json-value" } },
        { "json-array", { "ws", "json-value" } },
    };
    return d;
}

// A GBNF string literal whose sentence is exactly `text` (UTF-8 passes through).
std::string literal(const std::string& text)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string sanitize(const std::string& name)
{
    std::string out;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out += ok ? c : '-';
        if (out.size() >= 40)
            break;
    }
    return out.empty() ? "item" : out;
}

// Integer ranges are regular: a range of digit strings of one length is a first digit and a
// range of the rest, split where the first digits differ (as regex range generators do). The
// recursion goes one level per digit (16 at most), whatever the schema.
std::string digitsRange(const std::string& lo, const std::string& hi)
{
    if (lo.empty())
        return "";
    if (lo == hi)
        return "\"" + lo + "\"";
    const std::string rest = lo.substr(1);
    const std::size_t n = rest.size();
    auto digitClass = [](char a, char b) {
        return a == b ? "\"" + std::string(1, a) + "\""
                      : "[" + std::string(1, a) + "-" + std::string(1, b) + "]";
    };
    auto anyDigits = [](std::size_t count) {
        return count == 0 ? std::string() : " [0-9]{" + std::to_string(count) + "}";
    };
    if (lo[0] == hi[0])
        return "\"" + lo.substr(0, 1) + "\" ( " + digitsRange(rest, hi.substr(1)) + " )";
    const bool fromZeros = rest == std::string(n, '0');
    const bool toNines = hi.substr(1) == std::string(n, '9');
    std::vector<std::string> parts;
    char first = lo[0], last = hi[0];
    if (!fromZeros) {
        parts.push_back(
            "\"" + lo.substr(0, 1) + "\" ( " + digitsRange(rest, std::string(n, '9')) + " )");
        ++first;
    }
    if (!toNines)
        --last;
    if (first <= last)
        parts.push_back(digitClass(first, last) + anyDigits(n));
    if (!toNines)
        parts.push_back("\"" + hi.substr(0, 1) + "\" ( "
            + digitsRange(std::string(n, '0'), hi.substr(1)) + " )");
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : " | ") + p;
    return out;
}

// Non-negative integers in [lo, hi], written as JSON writes them (no leading zeros).
std::string naturalRange(int64_t lo, int64_t hi)
{
    std::vector<std::string> parts;
    for (std::size_t digits = std::to_string(lo).size(); digits <= std::to_string(hi).size();
         ++digits) {
        const int64_t smallest = digits == 1 ? 0 : int64_t(std::pow(10.0, double(digits - 1)));
        const int64_t largest = int64_t(std::pow(10.0, double(digits))) - 1;
        const int64_t a = std::max(lo, smallest), b = std::min(hi, largest);
        if (a <= b)
            parts.push_back("( " + digitsRange(std::to_string(a), std::to_string(b)) + " )");
    }
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : " | ") + p;
    return out;
}

std::string integerRange(int64_t lo, int64_t hi)
{
    std::vector<std::string> parts;
    if (lo < 0) // -1 down to lo: "-" and the magnitudes
        parts.push_back("\"-\" ( " + naturalRange(std::max<int64_t>(1, -hi), -lo) + " )");
    if (hi >= 0)
        parts.push_back(naturalRange(std::max<int64_t>(0, lo), hi));
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : " | ") + p;
    return "( " + out + " )";
}

class SchemaConverter {
public:
    explicit SchemaConverter(const Json& root)
        : m_root(root)
    {
    }

    Result<std::string> run()
    {
        const std::string root = visit(m_root, "", "root", 0);
        if (!m_error.empty())
            return makeError(m_error);
        std::string out = "root ::= " + root + "\n";
        for (const auto& [name, body] : m_rules) {
            out += name + " ::= " + body + "\n";
            if (out.size() > kMaxGrammarBytes)
                return makeError("JSON schema: its grammar would be larger than "
                    + std::to_string(kMaxGrammarBytes >> 10) + " KiB; use a smaller schema");
        }
        return out;
    }

private:
    void fail(const std::string& pointer, const std::string& what)
    {
        if (m_error.empty())
            m_error = "JSON schema at '" + (pointer.empty() ? std::string("#") : "#" + pointer)
                + "': " + what;
    }

    std::string use(const std::string& primitive)
    {
        if (!m_rules.count(primitive)) {
            m_rules[primitive] = primitives().at(primitive);
            auto deps = primitiveDeps().find(primitive);
            if (deps != primitiveDeps().end())
                for (const std::string& d : deps->second)
                    use(d);
        }
        return primitive;
    }

    std::string addRule(const std::string& hint, const std::string& body)
    {
        // The next free suffix of each base is remembered: trying "-1", "-2", ... from the
        // start each time made a schema of n properties cost n^2 (8,000: 11 s).
        std::string base = sanitize(hint);
        std::string name = base;
        int& next = m_nextSuffix[base];
        while (m_rules.count(name) || primitives().count(name) || name == "root")
            name = base + "-" + std::to_string(++next);
        m_rules[name] = body;
        return name;
    }

    bool count(const Json& s, const char* key, const std::string& ptr, int64_t& out)
    {
        if (!s.contains(key))
            return false;
        const Json& v = s.at(key);
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxCount) {
            fail(ptr + "/" + key,
                std::string("must be an integer in [0, ") + std::to_string(kMaxCount) + "]");
            return false;
        }
        out = v.get<int64_t>();
        return true;
    }

    std::string alternatives(
        const Json& list, const std::string& ptr, const std::string& hint, int depth)
    {
        if (!list.is_array() || list.empty()) {
            fail(ptr, "must be a non-empty array");
            return "";
        }
        std::string body;
        for (size_t i = 0; i < list.size(); ++i) {
            body += (i ? " | " : "")
                + visit(list[i], ptr + "/" + std::to_string(i), hint, depth + 1);
        }
        return "( " + body + " )";
    }

    std::string visit(const Json& s, const std::string& ptr, const std::string& hint, int depth)
    {
        if (!m_error.empty())
            return "";
        if (depth > kMaxDepth) {
            fail(ptr, "nested more than " + std::to_string(kMaxDepth) + " levels deep");
            return "";
        }
        if (++m_nodes > kMaxSchemaNodes) {
            fail(ptr,
                "the schema has more than " + std::to_string(kMaxSchemaNodes)
                    + " sub-schemas (properties, items, alternatives); use a smaller one");
            return "";
        }
        if (s.is_boolean()) {
            if (!s.get<bool>())
                fail(ptr, "the schema 'false' accepts nothing");
            return use("json-value");
        }
        if (!s.is_object()) {
            fail(ptr, "a schema must be an object or a boolean");
            return "";
        }
        static const char* unsupported[] = { "pattern", "patternProperties", "not", "if", "then",
            "else", "prefixItems", "contains", "minProperties", "maxProperties", "multipleOf",
            "dependentRequired", "dependentSchemas", "propertyNames", "unevaluatedProperties",
            "uniqueItems", "unevaluatedItems", "format", "contentEncoding", "contentMediaType" };
        for (const char* k : unsupported)
            if (s.contains(k)) {
                fail(ptr + "/" + k, "this keyword is not supported");
                return "";
            }
        // Bounds are enforced by the typed rules below; beside a reference, a constant, an
        // enum or alternatives, or without a type, they would be accepted and ignored.
        for (const char* combinator : { "$ref", "const", "enum", "anyOf", "oneOf", "allOf" })
            if (s.contains(combinator)) {
                if (!refuseUnenforcedBounds(s, ptr, std::string("beside '") + combinator + "'"))
                    return "";
                break;
            }
        if (!s.contains("type")
            && !refuseUnenforcedBounds(s, ptr, "without a \"type\"", s.contains("items")))
            return "";
        if (s.contains("$ref"))
            return reference(s.at("$ref"), ptr + "/$ref", depth);
        if (s.contains("const"))
            return "( " + literal(s.at("const").dump()) + " )";
        if (s.contains("enum")) {
            const Json& e = s.at("enum");
            if (!e.is_array() || e.empty()) {
                fail(ptr + "/enum", "must be a non-empty array");
                return "";
            }
            m_enumValues += int64_t(e.size());
            if (m_enumValues > kMaxEnumValues) {
                fail(ptr + "/enum",
                    "the schema has more than " + std::to_string(kMaxEnumValues) + " enum values");
                return "";
            }
            std::string body;
            for (size_t i = 0; i < e.size(); ++i)
                body += (i ? " | " : "") + literal(e[i].dump());
            return "( " + body + " )";
        }
        if (s.contains("anyOf"))
            return alternatives(s.at("anyOf"), ptr + "/anyOf", hint, depth);
        if (s.contains("oneOf"))
            return alternatives(s.at("oneOf"), ptr + "/oneOf", hint, depth);
        if (s.contains("allOf")) {
            const Json& a = s.at("allOf");
            if (!a.is_array() || a.size() != 1) {
                fail(ptr + "/allOf", "only a single-schema allOf is supported");
                return "";
            }
            return visit(a[0], ptr + "/allOf/0", hint, depth + 1);
        }
        if (!s.contains("type")) {
            if (s.contains("properties"))
                return object(s, ptr, hint, depth);
            if (s.contains("items"))
                return array(s, ptr, hint, depth);
            return use("json-value");
        }
        const Json& type = s.at("type");
        if (type.is_array()) {
            if (type.empty()) {
                fail(ptr + "/type", "must not be empty");
                return "";
            }
            std::string body;
            for (size_t i = 0; i < type.size(); ++i) {
                if (!type[i].is_string()) {
                    fail(ptr + "/type/" + std::to_string(i), "must be a string");
                    return "";
                }
                body += (i ? " | " : "") + typed(type[i].get<std::string>(), s, ptr, hint, depth);
            }
            return "( " + body + " )";
        }
        if (!type.is_string()) {
            fail(ptr + "/type", "must be a string or an array of strings");
            return "";
        }
        return typed(type.get<std::string>(), s, ptr, hint, depth);
    }

    // Fails naming the first bound in `s` that `where` leaves unenforced (minItems/maxItems are
    // enforced where the schema reads as an array). False when one was found.
    bool refuseUnenforcedBounds(
        const Json& s, const std::string& ptr, const std::string& where, bool itemsEnforced = false)
    {
        for (const char* k : { "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                 "minLength", "maxLength", "minItems", "maxItems" }) {
            const bool itemCount = std::string_view(k).ends_with("Items");
            if (s.contains(k) && !(itemCount && itemsEnforced)) {
                fail(ptr + "/" + k,
                    std::string("'") + k + "' " + where
                        + " cannot be enforced; give it in a schema with a \"type\"");
                return false;
            }
        }
        return true;
    }

    std::string typed(const std::string& type, const Json& s, const std::string& ptr,
        const std::string& hint, int depth)
    {
        if (type == "object")
            return object(s, ptr, hint, depth);
        if (type == "array")
            return array(s, ptr, hint, depth);
        if (type == "string")
            return string(s, ptr, hint);
        if (type == "number") {
            for (const char* k : { "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum" })
                if (s.contains(k)) {
                    fail(ptr + "/" + k,
                        "bounds are enforced for \"integer\" only; a \"number\" range cannot "
                        "be");
                    return "";
                }
            return use("json-number");
        }
        if (type == "integer")
            return integer(s, ptr, hint);
        if (type == "boolean")
            return use("json-boolean");
        if (type == "null")
            return use("json-null");
        fail(ptr + "/type", "unknown type '" + type + "'");
        return "";
    }

    // Reads a bound: minimum/maximum (inclusive), exclusiveMinimum/exclusiveMaximum as a
    // number (draft 6 on) or as true beside minimum/maximum (draft 4).
    bool bound(const Json& s, const std::string& ptr, bool lower, int64_t& out)
    {
        const char* inclusive = lower ? "minimum" : "maximum";
        const char* exclusive = lower ? "exclusiveMinimum" : "exclusiveMaximum";
        bool found = false;
        auto read = [&](const char* key, bool strict) {
            const Json& v = s.at(key);
            if (!v.is_number()) {
                fail(ptr + "/" + key, "must be a number");
                return;
            }
            // An integer above x is at least floor(x) + 1; at or above x, ceil(x).
            const double x = v.get<double>();
            double edge = lower ? (strict ? std::floor(x) + 1 : std::ceil(x))
                                : (strict ? std::ceil(x) - 1 : std::floor(x));
            if (v.is_number_integer()) {
                const int64_t i = v.is_number_unsigned()
                    ? int64_t(std::min<uint64_t>(v.get<uint64_t>(), uint64_t(INT64_MAX)))
                    : v.get<int64_t>();
                if (std::llabs(i) <= kLargestInteger + 1)
                    edge = double(lower ? (strict ? i + 1 : i) : (strict ? i - 1 : i));
            }
            if (std::isnan(edge)) {
                fail(ptr + "/" + key, "must be a number");
                return;
            }
            // Beyond the 16 digits an answer's integer may have, a bound changes nothing
            // (or leaves nothing, which integer() reports).
            edge = std::clamp(edge, -double(kLargestInteger) - 1, double(kLargestInteger) + 1);
            const int64_t e = int64_t(edge);
            out = found ? (lower ? std::max(out, e) : std::min(out, e)) : e;
            found = true;
        };
        const bool draft4 = s.contains(exclusive) && s.at(exclusive).is_boolean();
        if (s.contains(inclusive))
            read(inclusive, draft4 && s.at(exclusive).get<bool>());
        if (s.contains(exclusive) && !draft4)
            read(exclusive, true);
        return found;
    }

    std::string integer(const Json& s, const std::string& ptr, const std::string& hint)
    {
        int64_t lo = -kLargestInteger, hi = kLargestInteger;
        const bool hasLo = bound(s, ptr, true, lo);
        const bool hasHi = bound(s, ptr, false, hi);
        if (!m_error.empty())
            return "";
        if (!hasLo && !hasHi)
            return use("json-integer");
        if (lo > kLargestInteger || hi < -kLargestInteger || lo > hi) {
            fail(ptr, "no integer lies within its minimum and maximum");
            return "";
        }
        lo = std::max(lo, -kLargestInteger);
        hi = std::min(hi, kLargestInteger);
        return addRule(hint + "-int", integerRange(lo, hi));
    }

    std::string string(const Json& s, const std::string& ptr, const std::string& hint)
    {
        int64_t minLen = 0, maxLen = -1;
        count(s, "minLength", ptr, minLen);
        count(s, "maxLength", ptr, maxLen);
        if (!m_error.empty())
            return "";
        if (maxLen < 0 && minLen == 0)
            return use("json-string");
        if (maxLen >= 0 && maxLen < minLen) {
            fail(ptr, "maxLength is below minLength");
            return "";
        }
        use("json-char");
        const std::string bound = maxLen < 0
            ? "{" + std::to_string(minLen) + ",}"
            : "{" + std::to_string(minLen) + "," + std::to_string(maxLen) + "}";
        return addRule(hint + "-string", R"("\"" json-char)" + bound + R"( "\"")");
    }

    std::string array(const Json& s, const std::string& ptr, const std::string& hint, int depth)
    {
        std::string item = s.contains("items")
            ? visit(s.at("items"), ptr + "/items", hint + "-item", depth + 1)
            : use("json-value");
        int64_t minItems = 0, maxItems = -1;
        count(s, "minItems", ptr, minItems);
        count(s, "maxItems", ptr, maxItems);
        if (!m_error.empty())
            return "";
        if (maxItems >= 0 && maxItems < minItems) {
            fail(ptr, "maxItems is below minItems");
            return "";
        }
        use("ws");
        std::string body;
        if (maxItems == 0) {
            body = R"("[" ws "]")";
        } else {
            const int64_t restMin = minItems > 0 ? minItems - 1 : 0;
            const std::string rest = "( \",\" ws " + item + " ws )"
                + (maxItems < 0
                        ? "{" + std::to_string(restMin) + ",}"
                        : "{" + std::to_string(restMin) + "," + std::to_string(maxItems - 1) + "}");
            const std::string items = item + " ws " + rest;
            body = "\"[\" ws " + (minItems > 0 ? items : "( " + items + " )?") + " \"]\"";
        }
        return addRule(hint + "-array", body);
    }

    std::string object(const Json& s, const std::string& ptr, const std::string& hint, int depth)
    {
        use("ws");
        std::vector<std::pair<std::string, std::string>> props; // key literal, value rule
        std::vector<bool> required;
        std::set<std::string> requiredNames;
        if (s.contains("required")) {
            const Json& r = s.at("required");
            if (!r.is_array()) {
                fail(ptr + "/required", "must be an array of strings");
                return "";
            }
            for (const Json& k : r) {
                if (!k.is_string()) {
                    fail(ptr + "/required", "must be an array of strings");
                    return "";
                }
                requiredNames.insert(k.get<std::string>());
            }
        }
        if (s.contains("properties")) {
            const Json& p = s.at("properties");
            if (!p.is_object()) {
                fail(ptr + "/properties", "must be an object");
                return "";
            }
            for (const auto& [key, sub] : p.items()) {
                const std::string value = visit(sub, ptr + "/properties/" + key, key, depth + 1);
                props.push_back({ literal(Json(key).dump()), value });
                required.push_back(requiredNames.erase(key) > 0);
            }
        }
        if (!requiredNames.empty()) {
            fail(ptr + "/required", "'" + *requiredNames.begin() + "' is not among the properties");
            return "";
        }
        std::string extra; // the value rule of additional properties, if allowed
        if (s.contains("additionalProperties")) {
            const Json& a = s.at("additionalProperties");
            if (!(a.is_boolean() && !a.get<bool>()))
                extra = visit(a, ptr + "/additionalProperties", hint + "-extra", depth + 1);
        } else if (!s.contains("properties")) {
            extra = use("json-value"); // a bare {"type": "object"}: any object
        }
        if (!m_error.empty())
            return "";
        // rest(k, emitted): the members from property k on; `emitted` says whether a member
        // came before (so the next one needs a comma). Built from the end.
        const std::string base = hint + "-obj";
        std::string restNone, restSome; // rule bodies for k = n
        if (extra.empty()) {
            restNone = restSome = "";
        } else {
            const std::string kv = use("json-string") + " ws \":\" ws " + extra + " ws";
            restSome = "( \",\" ws " + kv + " )*";
            restNone = "( " + kv + " ( \",\" ws " + kv + " )* )?";
        }
        std::string nameNone = restNone.empty() ? "" : addRule(base + "-tail", restNone);
        std::string nameSome = restSome.empty() ? "" : addRule(base + "-tail", restSome);
        for (size_t k = props.size(); k-- > 0;) {
            const std::string kv = props[k].first + " ws \":\" ws " + props[k].second + " ws";
            const std::string withComma
                = "\",\" ws " + kv + (nameSome.empty() ? "" : " " + nameSome);
            const std::string first = kv + (nameSome.empty() ? "" : " " + nameSome);
            std::string some = withComma, none = first;
            if (!required[k]) {
                some = withComma + " | " + (nameSome.empty() ? "\"\"" : nameSome);
                none = first + " | " + (nameNone.empty() ? "\"\"" : nameNone);
            }
            nameSome = addRule(base, some);
            nameNone = addRule(base, none);
        }
        return addRule(base, "\"{\" ws " + (nameNone.empty() ? "" : nameNone + " ") + "\"}\"");
    }

    std::string reference(const Json& ref, const std::string& ptr, int depth)
    {
        if (!ref.is_string()) {
            fail(ptr, "must be a string");
            return "";
        }
        const std::string r = ref.get<std::string>();
        auto known = m_refs.find(r);
        if (known != m_refs.end())
            return known->second;
        std::string path;
        if (r.rfind("#/$defs/", 0) == 0)
            path = "$defs";
        else if (r.rfind("#/definitions/", 0) == 0)
            path = "definitions";
        else {
            fail(ptr, "only local references to #/$defs/ or #/definitions/ are supported");
            return "";
        }
        const std::string key = r.substr(path.size() + 3);
        if (!m_root.is_object() || !m_root.contains(path) || !m_root.at(path).is_object()
            || !m_root.at(path).contains(key)) {
            fail(ptr, "reference '" + r + "' does not resolve");
            return "";
        }
        const std::string name = addRule("ref-" + key, "\"\""); // placeholder until visited
        m_refs[r] = name;
        m_rules[name] = visit(m_root.at(path).at(key), "/" + path + "/" + key, key, depth + 1);
        return name;
    }

    const Json& m_root;
    std::map<std::string, int> m_nextSuffix;
    int64_t m_nodes = 0;
    int64_t m_enumValues = 0;
    std::map<std::string, std::string> m_rules;
    std::map<std::string, std::string> m_refs;
    std::string m_error;
};

} // namespace

Result<std::string> jsonSchemaToGbnf(const nlohmann::ordered_json& schema)
{
    return SchemaConverter(schema).run();
}

Result<std::string> jsonSchemaToGbnf(std::string_view schemaText)
{
    auto schema = parseBoundedJson(schemaText);
    if (!schema)
        return makeError("JSON schema: the text " + schema.error().message);
    return jsonSchemaToGbnf(*schema);
}

} // namespace cw::sampling
