// The tokenizer built from GGUF metadata (tokenizer.ggml.*) must equal the one built from
// tokenizer.json. The GGUF form is made here the way llama.cpp's converter writes it:
// tokens in byte-level spelling by id, merges as "left right", added tokens as raw text
// with type 3 (control) or 4 (user defined).
#include "engine/model/model_description.h"
#include "qwen3_fixture.h"

using cw::engine::TokenizerSource;

namespace {

TokenizerSource ggufLikeSource()
{
    std::ifstream in(cw::test::qwen3TokenizerJsonPath());
    const nlohmann::json root = nlohmann::json::parse(in);
    TokenizerSource source;
    const auto& vocab = root["model"]["vocab"];
    std::size_t size = vocab.size();
    for (const auto& a : root["added_tokens"])
        size = std::max(size, a["id"].get<std::size_t>() + 1);
    source.ggmlTokens.resize(size);
    source.ggmlTokenTypes.assign(size, 1);
    for (const auto& [spelling, id] : vocab.items())
        source.ggmlTokens[id.get<std::size_t>()] = spelling;
    for (const auto& a : root["added_tokens"]) {
        const auto id = a["id"].get<std::size_t>();
        source.ggmlTokens[id] = a["content"].get<std::string>();
        source.ggmlTokenTypes[id] = a["special"].get<bool>() ? 3 : 4;
    }
    for (const auto& m : root["model"]["merges"]) {
        source.ggmlMerges.push_back(m.is_string()
                ? m.get<std::string>()
                : m[0].get<std::string>() + " " + m[1].get<std::string>());
    }
    source.ggmlPre = "qwen2";
    source.eosId = 151645;
    source.padId = 151643;
    return source;
}

} // namespace

TEST(TokenizerSource, ggufMetadataGivesTheSameTokenizerAsTokenizerJson)
{
    const TokenizerSource source = ggufLikeSource();
    auto fromGguf = cw::engine::tokenizerFromSource(source);
    ASSERT_TRUE(fromGguf.ok()) << fromGguf.error().message;
    const auto& reference = cw::test::qwen3Tokenizer();
    EXPECT_EQ(fromGguf->vocabSize(), reference.vocabSize());
    EXPECT_EQ(fromGguf->specialIds().eos, 151645);
    EXPECT_EQ(fromGguf->specialIds().imStart, 151644);
    EXPECT_EQ(fromGguf->specialIds().thinkEnd, 151668);
    EXPECT_TRUE(fromGguf->isSpecial(151644));
    EXPECT_FALSE(fromGguf->isSpecial(151667));
    for (const auto& c : cw::test::qwen3Reference()["encode"]) {
        const auto ids = c["ids"].get<std::vector<std::int32_t>>();
        EXPECT_EQ(fromGguf->encode(c["text"].get<std::string>()), ids)
            << "case " << c["name"].get<std::string>();
        EXPECT_EQ(fromGguf->decode(ids), c["decoded"].get<std::string>());
    }
}

TEST(TokenizerSource, tokenizerJsonPathIsLoadedFromDisk)
{
    TokenizerSource source;
    source.tokenizerJsonPath = cw::test::qwen3TokenizerJsonPath();
    source.tokenizerConfigPath = cw::test::tokenizerDataDir() + "qwen3_tokenizer_config.json";
    auto t = cw::engine::tokenizerFromSource(source);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->encode("Hello world"), (std::vector<std::int32_t> { 9707, 1879 }));
}

TEST(TokenizerSource, refusesInconsistentGgufMetadata)
{
    TokenizerSource empty;
    auto r = cw::engine::tokenizerFromSource(empty);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("tokenizer.ggml.tokens"), std::string::npos);

    TokenizerSource mismatched;
    mismatched.ggmlTokens = { "a", "b" };
    mismatched.ggmlTokenTypes = { 1 };
    r = cw::engine::tokenizerFromSource(mismatched);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("token_type"), std::string::npos);

    TokenizerSource badMerge;
    badMerge.ggmlTokens = { "a", "b" };
    badMerge.ggmlMerges = { "ab" };
    r = cw::engine::tokenizerFromSource(badMerge);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("merges[0]"), std::string::npos);

    TokenizerSource unknownPre;
    unknownPre.ggmlTokens = { "a" };
    unknownPre.ggmlPre = "llama-bpe";
    r = cw::engine::tokenizerFromSource(unknownPre);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("llama-bpe"), std::string::npos);
}
