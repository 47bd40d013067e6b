#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "qwen3_fixture.h"

#include <thread>

using cw::engine::StreamingDetokenizer;
using cw::engine::Tokenizer;
using cw::test::qwen3Reference;
using cw::test::qwen3Tokenizer;

namespace {

std::vector<std::int32_t> idsOf(const nlohmann::json& value)
{
    return value.get<std::vector<std::int32_t>>();
}

} // namespace

TEST(Qwen3Tokenizer, exposesVocabularyAndSpecialIds)
{
    const Tokenizer& t = qwen3Tokenizer();
    EXPECT_EQ(t.vocabSize(), 151669);
    const auto& s = t.specialIds();
    EXPECT_EQ(s.eos, 151645); // tokenizer_config.json: eos_token <|im_end|>
    EXPECT_EQ(s.pad, 151643); // pad_token <|endoftext|>
    EXPECT_FALSE(s.bos.has_value());
    EXPECT_EQ(s.endOfText, 151643);
    EXPECT_EQ(s.imStart, 151644);
    EXPECT_EQ(s.imEnd, 151645);
    EXPECT_EQ(s.thinkStart, 151667);
    EXPECT_EQ(s.thinkEnd, 151668);
    EXPECT_TRUE(t.isSpecial(151644));
    EXPECT_FALSE(t.isSpecial(151667)); // <think> is added but not special
    EXPECT_TRUE(t.isAdded(151667));
    EXPECT_EQ(t.normalization(), cw::engine::NormalizationForm::Nfc);
}

TEST(Qwen3Tokenizer, encodesEveryReferenceCaseLikeTransformers)
{
    const Tokenizer& t = qwen3Tokenizer();
    const auto& cases = qwen3Reference()["encode"];
    ASSERT_GE(cases.size(), 30u);
    for (const auto& c : cases) {
        const std::string text = c["text"].get<std::string>();
        EXPECT_EQ(t.encode(text), idsOf(c["ids"])) << "case " << c["name"].get<std::string>();
    }
}

TEST(Qwen3Tokenizer, decodesEncodedTextBackToTheNormalizedText)
{
    const Tokenizer& t = qwen3Tokenizer();
    for (const auto& c : qwen3Reference()["encode"]) {
        const auto ids = idsOf(c["ids"]);
        EXPECT_EQ(t.decode(ids), c["decoded"].get<std::string>())
            << "case " << c["name"].get<std::string>();
        // NFC text comes back byte for byte.
        if (c["name"] != "accents_decomposed") {
            const std::string text = c["text"].get<std::string>();
            EXPECT_EQ(t.decode(t.encode(text)), text);
        }
    }
}

TEST(Qwen3Tokenizer, decodesCutCharactersAndSkipsSpecialTokensLikeTransformers)
{
    const Tokenizer& t = qwen3Tokenizer();
    for (const auto& c : qwen3Reference()["decode"]) {
        const auto ids = idsOf(c["ids"]);
        EXPECT_EQ(t.decode(ids), c["text"].get<std::string>()) << c["name"].get<std::string>();
        EXPECT_EQ(t.decode(ids, true), c["text_skip_special"].get<std::string>())
            << c["name"].get<std::string>();
    }
}

TEST(Qwen3Tokenizer, ignoresIdsOutsideTheVocabularyWhenDecoding)
{
    const Tokenizer& t = qwen3Tokenizer();
    const std::vector<std::int32_t> ids { 9707, -1, 1 << 30, 151669, 1879 };
    EXPECT_EQ(t.decode(ids), "Hello world");
}

TEST(Qwen3Tokenizer, replacesInvalidUtf8BeforeEncoding)
{
    const Tokenizer& t = qwen3Tokenizer();
    EXPECT_EQ(t.encode("\xff abc"), t.encode("\xEF\xBF\xBD abc"));
    EXPECT_EQ(t.encode("x\xe4\xb8"), t.encode("x\xEF\xBF\xBD")); // a cut CJK character
    EXPECT_EQ(
        t.encode("\xed\xa0\x80"), t.encode("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD")); // surrogate
    EXPECT_EQ(t.encode(std::string("a\0b", 3)), (std::vector<std::int32_t> { 64, 188, 65 }));
}

TEST(Qwen3Tokenizer, matchesTheLongestAddedTokenAndLeavesPartialOnesToBpe)
{
    const Tokenizer& t = qwen3Tokenizer();
    const auto ids = t.encode("<think></think>");
    EXPECT_EQ(ids, (std::vector<std::int32_t> { 151667, 151668 }));
    const auto partial = t.encode("<|im_start|");
    for (const auto id : partial)
        EXPECT_FALSE(t.isAdded(id));
}

TEST(StreamingDetokenizer, neverEmitsHalfACharacter)
{
    const Tokenizer& t = qwen3Tokenizer();
    // 🫠 is three byte-level tokens (F0 9F | AB | A0) in Qwen3's vocabulary.
    const std::vector<std::int32_t> emoji = t.encode("🫠");
    ASSERT_EQ(emoji.size(), 3u);
    StreamingDetokenizer stream(t);
    EXPECT_EQ(stream.push(emoji[0]), "");
    EXPECT_EQ(stream.pendingBytes(), 2u);
    EXPECT_EQ(stream.push(emoji[1]), "");
    EXPECT_EQ(stream.push(emoji[2]), "🫠");
    EXPECT_EQ(stream.pendingBytes(), 0u);
    EXPECT_EQ(stream.flush(), "");

    // A rare CJK character (U+20000) also arrives in pieces.
    const std::vector<std::int32_t> cjk = t.encode("𠀀 ok");
    StreamingDetokenizer cjkStream(t);
    std::string text;
    for (const auto id : cjk) {
        const std::string piece = cjkStream.push(id);
        EXPECT_TRUE(cw::engine::utf8::isValid(piece));
        text += piece;
    }
    EXPECT_EQ(text + cjkStream.flush(), "𠀀 ok");
}

TEST(StreamingDetokenizer, emitsInTotalWhatDecodeGives)
{
    const Tokenizer& t = qwen3Tokenizer();
    for (const auto& c : qwen3Reference()["encode"]) {
        StreamingDetokenizer stream(t);
        std::string text;
        for (const auto id : idsOf(c["ids"])) {
            const std::string piece = stream.push(id);
            ASSERT_TRUE(cw::engine::utf8::isValid(piece)) << c["name"].get<std::string>();
            text += piece;
        }
        text += stream.flush();
        EXPECT_EQ(text, c["decoded"].get<std::string>()) << c["name"].get<std::string>();
    }
    for (const auto& c : qwen3Reference()["decode"]) {
        StreamingDetokenizer stream(t, true);
        std::string text;
        for (const auto id : idsOf(c["ids"]))
            text += stream.push(id);
        text += stream.flush(); // a cut character at the end becomes U+FFFD
        EXPECT_EQ(text, c["text_skip_special"].get<std::string>()) << c["name"].get<std::string>();
    }
}

TEST(Qwen3Tokenizer, encodesTheSameFromSeveralThreads)
{
    const Tokenizer& t = qwen3Tokenizer();
    const auto& cases = qwen3Reference()["encode"];
    std::vector<std::thread> threads;
    std::vector<int> mismatches(4, 0);
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([&, k] {
            for (const auto& c : cases) {
                if (t.encode(c["text"].get<std::string>()) != idsOf(c["ids"]))
                    ++mismatches[std::size_t(k)];
            }
        });
    }
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(TokenizerJson, namesTheFileWhenItIsMissing)
{
    auto r = cw::engine::loadTokenizerJson("/nonexistent/dir/tokenizer.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("/nonexistent/dir/tokenizer.json"), std::string::npos);
    EXPECT_NE(r.error().message.find("cannot open"), std::string::npos);
}

TEST(TokenizerJson, reportsMalformedJson)
{
    auto r = cw::engine::parseTokenizerJson("{\"model\": {", "", "broken/tokenizer.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("broken/tokenizer.json"), std::string::npos);
    EXPECT_NE(r.error().message.find("malformed JSON"), std::string::npos);
}

TEST(TokenizerJson, reportsWhatIsStructurallyWrong)
{
    const auto message = [](const std::string& json) {
        auto r = cw::engine::parseTokenizerJson(json, "", "t.json");
        return r.ok() ? std::string("ok") : r.error().message;
    };
    const std::string byteLevel
        = R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})";
    EXPECT_NE(message("[1, 2]").find("not a JSON object"), std::string::npos);
    EXPECT_NE(message("{}").find("no \"model\""), std::string::npos);
    EXPECT_NE(message(R"({"model": {"type": "Unigram", "vocab": []}})").find("Unigram"),
        std::string::npos);
    EXPECT_NE(message(R"({"model": {"type": "BPE"}, )" + byteLevel + "}").find("model.vocab"),
        std::string::npos);
    EXPECT_NE(message(R"({"model": {"type": "BPE", "vocab": {"a": -4}}, )" + byteLevel + "}")
                  .find("out of range"),
        std::string::npos);
    EXPECT_NE(message(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}, )"
                  + byteLevel + "}")
                  .find("merge 0"),
        std::string::npos);
    EXPECT_NE(
        message(
            R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}})")
            .find("ByteLevel"),
        std::string::npos);
    EXPECT_NE(
        message(
            R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated"}, {"type": "ByteLevel", "use_regex": false}]}})")
            .find("regex"),
        std::string::npos);
}

TEST(TokenizerJson, buildsASmallByteLevelTokenizer)
{
    // Vocabulary: the bytes of "ab" plus merges; GPT-2 pattern through ByteLevel use_regex.
    const std::string json = R"({
      "normalizer": null,
      "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
      "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġab": 4},
                "merges": [["a", "b"], ["Ġ", "ab"]]},
      "added_tokens": [{"id": 5, "content": "<x>", "special": true}]
    })";
    auto r = cw::engine::parseTokenizerJson(json, R"({"eos_token": "<x>"})", "small.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->encode("ab ab<x>ba"), (std::vector<std::int32_t> { 3, 4, 5, 1, 0 }));
    EXPECT_EQ(r->specialIds().eos, 5);
    EXPECT_EQ(r->decode(std::vector<std::int32_t> { 3, 4, 5 }), "ab ab<x>");
    EXPECT_EQ(r->decode(std::vector<std::int32_t> { 3, 4, 5 }, true), "ab ab");
    // A byte missing from the vocabulary is dropped (no unknown token), never a crash.
    EXPECT_EQ(r->encode("abc"), (std::vector<std::int32_t> { 3 }));
}
