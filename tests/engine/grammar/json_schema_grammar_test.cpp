#include "engine/sampling/grammar_matcher.h"
#include "engine/sampling/json_schema_grammar.h"

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
