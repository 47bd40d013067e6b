// Cross-check against Hugging Face tokenizers itself (Rust, via transformers 5.17): the tiny
// Qwen-style tokenizer of the golden models (tests/data/golden/tokenizer, made by the
// golden-data generator) with its reference encodings and chat renderings.
#include "engine/chat/chat_template.h"
#include "engine/tokenizer/tokenizer.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

const std::string kGolden = std::string(CW_TEST_DATA_DIR) + "/golden/tokenizer/";

nlohmann::json goldenReference()
{
    std::ifstream in(kGolden + "reference.json");
    return nlohmann::json::parse(in);
}

} // namespace

TEST(GoldenTokenizer, encodesAndDecodesLikeHuggingFaceTokenizers)
{
    auto t = cw::engine::loadTokenizerJson(kGolden + "tokenizer.json");
    ASSERT_TRUE(t.ok()) << t.error().message;
    const auto reference = goldenReference();
    EXPECT_EQ(t->vocabSize(), reference["vocab_size"].get<int>());
    ASSERT_GE(reference["encodings"].size(), 5u);
    for (const auto& e : reference["encodings"]) {
        const auto ids = e["ids"].get<std::vector<std::int32_t>>();
        EXPECT_EQ(t->encode(e["text"].get<std::string>()), ids) << e["text"];
        EXPECT_EQ(t->decode(ids), e["decoded"].get<std::string>()) << e["text"];
    }
}

TEST(GoldenTokenizer, plainChatMlTemplateRendersAndTokenizesLikeTransformers)
{
    auto t = cw::engine::loadTokenizerJson(kGolden + "tokenizer.json");
    ASSERT_TRUE(t.ok()) << t.error().message;
    std::ifstream in(kGolden + "chat_template.jinja");
    std::stringstream jinja;
    jinja << in.rdbuf();
    const auto chat = cw::engine::ChatTemplate::fromJinja(jinja.str());
    // A minimal ChatML template is not a Qwen flavour: ChatML with a warning, same text.
    EXPECT_EQ(chat.flavour(), cw::engine::ChatTemplateFlavour::ChatMl);
    // Named: a range-for over goldenReference()["chats"] iterates a destroyed temporary.
    const nlohmann::json reference = goldenReference();
    for (const auto& c : reference["chats"]) {
        std::vector<cw::engine::ChatMessage> messages;
        for (const auto& m : c["messages"])
            messages.push_back(
                { m["role"].get<std::string>(), m["content"].get<std::string>(), {} });
        const auto text = chat.render(messages);
        ASSERT_TRUE(text.ok());
        EXPECT_EQ(*text, c["text"].get<std::string>());
        EXPECT_EQ(t->encode(*text), c["ids"].get<std::vector<std::int32_t>>());
    }
}
