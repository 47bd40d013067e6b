#include "engine/sampling/grammar_matcher.h"
#include "engine/sampling/json_schema_grammar.h"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>

using namespace cw::sampling;

namespace {

std::shared_ptr<const Grammar> schemaGrammar(const std::string& schema)
{
    auto gbnf = jsonSchemaToGbnf(std::string_view(schema));
    EXPECT_TRUE(gbnf.ok()) << (gbnf.ok() ? "" : gbnf.error().message);
    auto g = Grammar::parse(*gbnf);
    EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message) << "\n" << *gbnf;
    return std::make_shared<const Grammar>(std::move(*g));
}

bool matches(const std::shared_ptr<const Grammar>& g, const std::string& s)
{
    GrammarMatcher m(g);
    return m.accept(s) && m.isComplete();
}

const char* kReviewSchema = R"({
  "type": "object",
  "properties": {
    "category": {"enum": ["Governing Law", "Non-Compete", "Cap On Liability"]},
    "present": {"type": "boolean"},
    "risk": {"type": "string", "enum": ["low", "medium", "high"]},
    "rationale": {"type": "string", "maxLength": 20},
    "quotes": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
  },
  "required": ["category", "present", "risk", "rationale"]
})";

} // namespace

TEST(JsonSchemaGrammar, acceptsValidReviewObjects)
{
    auto g = schemaGrammar(kReviewSchema);
    EXPECT_TRUE(
        matches(g, R"({"category":"Non-Compete","present":true,"risk":"low","rationale":"ok"})"));
    EXPECT_TRUE(matches(g, R"({ "category": "Governing Law", "present": false, "risk": "high",
  "rationale": "d\u00e9j\u00e0 \"vu\"", "quotes": ["a", "b\nc"] })"));
    EXPECT_TRUE(matches(g,
        R"({"category":"Cap On Liability","present":true,"risk":"medium","rationale":"","quotes":[]})"));
}

TEST(JsonSchemaGrammar, rejectsInvalidReviewObjects)
{
    auto g = schemaGrammar(kReviewSchema);
    // Missing a required key.
    EXPECT_FALSE(matches(g, R"({"category":"Non-Compete","present":true,"risk":"low"})"));
    // Enum value outside the list.
    EXPECT_FALSE(
        matches(g, R"({"category":"Warranty","present":true,"risk":"low","rationale":""})"));
    EXPECT_FALSE(
        matches(g, R"({"category":"Non-Compete","present":true,"risk":"severe","rationale":""})"));
    // Wrong type.
    EXPECT_FALSE(
        matches(g, R"({"category":"Non-Compete","present":"yes","risk":"low","rationale":""})"));
    // maxLength 20 exceeded, maxItems 2 exceeded.
    EXPECT_FALSE(matches(g,
        R"({"category":"Non-Compete","present":true,"risk":"low","rationale":"123456789012345678901"})"));
    EXPECT_FALSE(matches(g,
        R"({"category":"Non-Compete","present":true,"risk":"low","rationale":"","quotes":["a","b","c"]})"));
    // Additional properties are refused by default; raw control characters in strings too.
    EXPECT_FALSE(matches(
        g, R"({"category":"Non-Compete","present":true,"risk":"low","rationale":"","x":1})"));
    EXPECT_FALSE(matches(g,
        "{\"category\":\"Non-Compete\",\"present\":true,\"risk\":\"low\",\"rationale\":\"a\nb\"}"));
    // Trailing garbage, not JSON.
    EXPECT_FALSE(
        matches(g, R"({"category":"Non-Compete","present":true,"risk":"low","rationale":""}x)"));
}

TEST(JsonSchemaGrammar, numbersIntegersNullAndTypeLists)
{
    auto g = schemaGrammar(R"({"type":"object","properties":{
        "n":{"type":"number"},"i":{"type":"integer"},"z":{"type":["string","null"]}},
        "required":["n","i","z"]})");
    EXPECT_TRUE(matches(g, R"({"n":-1.5e+10,"i":42,"z":null})"));
    EXPECT_TRUE(matches(g, R"({"n":0,"i":-7,"z":"s"})"));
    EXPECT_FALSE(matches(g, R"({"n":01,"i":1,"z":null})"));
    EXPECT_FALSE(matches(g, R"({"n":1,"i":1.5,"z":null})"));
    EXPECT_FALSE(matches(g, R"({"n":1,"i":1,"z":3})"));
}

TEST(JsonSchemaGrammar, arraysWithMinAndMaxItems)
{
    auto g
        = schemaGrammar(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
    EXPECT_FALSE(matches(g, "[1]"));
    EXPECT_TRUE(matches(g, "[1, 2]"));
    EXPECT_TRUE(matches(g, "[1,2,3]"));
    EXPECT_FALSE(matches(g, "[1,2,3,4]"));
    EXPECT_FALSE(matches(g, "[]"));
}

TEST(JsonSchemaGrammar, optionalPropertiesKeepSchemaOrder)
{
    auto g = schemaGrammar(
        R"({"type":"object","properties":{"b":{"const":1},"a":{"const":2},"c":{"const":3}},"required":["a"]})");
    EXPECT_TRUE(matches(g, R"({"a":2})"));
    EXPECT_TRUE(matches(g, R"({"b":1,"a":2,"c":3})"));
    EXPECT_TRUE(matches(g, R"({"a":2,"c":3})"));
    EXPECT_FALSE(matches(g, R"({"b":1})"));
    EXPECT_FALSE(matches(g, R"({"a":2,"b":1})"));
    EXPECT_FALSE(matches(g, R"({"b":1,,"a":2})"));
}

TEST(JsonSchemaGrammar, nestedObjectsRefsAndAnyValue)
{
    auto g = schemaGrammar(
        R"({"$defs":{"party":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},
        "type":"object","properties":{"parties":{"type":"array","items":{"$ref":"#/$defs/party"}},
        "extra":{}},"required":["parties"]})");
    EXPECT_TRUE(matches(g, R"({"parties":[{"name":"A"},{"name":"B"}]})"));
    EXPECT_TRUE(matches(g, R"({"parties":[],"extra":{"k":[1,true,null,{"x":"y"}]}})"));
    EXPECT_FALSE(matches(g, R"({"parties":[{"nom":"A"}]})"));
}

TEST(JsonSchemaGrammar, errorsNameThePointer)
{
    auto e = jsonSchemaToGbnf(
        std::string_view(R"({"type":"object","properties":{"a":{"type":"strin"}}})"));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().message, "JSON schema at '#/properties/a/type': unknown type 'strin'");
    e = jsonSchemaToGbnf(std::string_view(R"({"type":"string","pattern":"^a"})"));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().message, "JSON schema at '#/pattern': this keyword is not supported");
    e = jsonSchemaToGbnf(std::string_view(R"({"type":"object","properties":{},"required":["x"]})"));
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("'x' is not among the properties"), std::string::npos);
    e = jsonSchemaToGbnf(std::string_view(R"({"$ref":"#/$defs/missing"})"));
    EXPECT_FALSE(e.ok());
    e = jsonSchemaToGbnf(std::string_view("{not json"));
    EXPECT_FALSE(e.ok());
    e = jsonSchemaToGbnf(std::string_view(R"({"type":"array","minItems":3,"maxItems":1})"));
    EXPECT_FALSE(e.ok());
}

TEST(JsonSchemaGrammar, integerRangesAreEnforced)
{
    // Before: minimum/maximum were accepted and ignored ([0, 5] gave 73, 6415, 29).
    auto g = schemaGrammar(R"({"type":"integer","minimum":0,"maximum":5})");
    for (int i = 0; i <= 5; ++i)
        EXPECT_TRUE(matches(g, std::to_string(i))) << i;
    for (const char* out : { "6", "73", "6415", "29", "-1", "05", "-0" })
        EXPECT_FALSE(matches(g, out)) << out;
    // Every integer of a range crossing zero and digit counts, and none next to it.
    g = schemaGrammar(R"({"type":"integer","minimum":-123,"exclusiveMaximum":4056})");
    for (int i = -130; i <= 4070; ++i)
        EXPECT_EQ(matches(g, std::to_string(i)), i >= -123 && i < 4056) << i;
    // Draft 4's boolean exclusiveMinimum, a lower bound alone, and an upper bound alone.
    g = schemaGrammar(R"({"type":"integer","minimum":10,"exclusiveMinimum":true})");
    EXPECT_FALSE(matches(g, "10"));
    EXPECT_TRUE(matches(g, "11"));
    EXPECT_TRUE(matches(g, "9999999999999999"));
    g = schemaGrammar(R"({"type":"integer","maximum":-1000})");
    EXPECT_TRUE(matches(g, "-1000"));
    EXPECT_TRUE(matches(g, "-99999"));
    EXPECT_FALSE(matches(g, "-999"));
    EXPECT_FALSE(matches(g, "0"));
    // Non-integer bounds round inwards; a bound past 16 digits changes nothing.
    g = schemaGrammar(R"({"type":"integer","minimum":1.5,"maximum":1e30})");
    EXPECT_FALSE(matches(g, "1"));
    EXPECT_TRUE(matches(g, "2"));
}

TEST(JsonSchemaGrammar, refusesWhatItCannotEnforceAndOversizedSchemas)
{
    auto message = [](const std::string& schema) {
        auto e = jsonSchemaToGbnf(std::string_view(schema));
        return e.ok() ? std::string("accepted") : e.error().message;
    };
    EXPECT_EQ(message(R"({"type":"number","minimum":0})"),
        "JSON schema at '#/minimum': bounds are enforced for \"integer\" only; a \"number\" "
        "range cannot be");
    EXPECT_EQ(message(R"({"type":"integer","minimum":5,"maximum":4})"),
        "JSON schema at '#': no integer lies within its minimum and maximum");
    // Bounds where the grammar would not apply them: without a type, beside enum/const/anyOf.
    EXPECT_EQ(message(R"({"minimum":0,"maximum":5})"),
        "JSON schema at '#/minimum': 'minimum' without a \"type\" cannot be enforced; give it in "
        "a schema with a \"type\"");
    EXPECT_EQ(message(R"({"enum":[1,2,70],"maximum":5})"),
        "JSON schema at '#/maximum': 'maximum' beside 'enum' cannot be enforced; give it in a "
        "schema with a \"type\"");
    EXPECT_NE(message(R"({"anyOf":[{"type":"string"}],"maxLength":3})").find("beside 'anyOf'"),
        std::string::npos);
    EXPECT_NE(message(R"({"properties":{"a":{"type":"integer","minimum":0}},"minimum":1})")
                  .find("'#/minimum'"),
        std::string::npos);
    // ... and where they are applied they are kept.
    EXPECT_EQ(message(R"({"items":{"type":"integer"},"minItems":1})"), "accepted");
    EXPECT_EQ(message(R"({"type":["integer","null"],"minimum":0})"), "accepted");
    EXPECT_EQ(message(R"({"type":"array","uniqueItems":true})"),
        "JSON schema at '#/uniqueItems': this keyword is not supported");
    EXPECT_EQ(message(R"({"type":"string","format":"date"})"),
        "JSON schema at '#/format': this keyword is not supported");
    // 8,000 properties took 11.5 s (rule names were found by trying -1, -2, ... each time).
    std::string wide = R"({"type":"object","properties":{)";
    for (int i = 0; i < 8000; ++i)
        wide += (i ? ",\"p" : "\"p") + std::to_string(i) + R"(":{"type":"boolean"})";
    wide += "}}";
    EXPECT_NE(message(wide).find("more than 1000 sub-schemas"), std::string::npos);
    std::string deep;
    for (int i = 0; i < 40; ++i)
        deep += R"({"type":"array","items":)";
    deep += "{}" + std::string(40, '}');
    EXPECT_NE(message(deep).find("nested more than 32 levels deep"), std::string::npos);
    EXPECT_NE(
        message(std::string(100000, '[') + std::string(100000, ']')).find("nested more than 64"),
        std::string::npos);
}

TEST(JsonSchemaGrammar, aSchemaAtTheLimitCompilesQuickly)
{
    std::string wide = R"({"type":"object","properties":{)";
    for (int i = 0; i < 990; ++i)
        wide += (i ? ",\"p" : "\"p") + std::to_string(i)
            + R"(":{"type":"integer","minimum":0,"maximum":1000})";
    wide += "}}";
    const auto start = std::chrono::steady_clock::now();
    auto gbnf = jsonSchemaToGbnf(std::string_view(wide));
    ASSERT_TRUE(gbnf.ok()) << gbnf.error().message;
    auto g = Grammar::parse(*gbnf);
    ASSERT_TRUE(g.ok()) << g.error().message;
    const double ms
        = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
    EXPECT_LT(ms, 5000) << "schema to grammar: " << ms << " ms"; // ~70 ms in a release build
}
