// openTokenizer on a GGUF file: the tokenizer comes from its tokenizer.ggml.* metadata
// (through openModel). The file is the tiny GGUF model of tests/engine/gguf.
#include "engine/tokenizer/tokenizer.h"
#include "tiny_gguf_model.h"

#include <gtest/gtest.h>

TEST(GgufTokenizer, openTokenizerReadsTheGgufMetadata)
{
    const std::string path = std::string(CW_TEST_BINARY_DIR) + "/tiny_tokenizer.gguf";
    const auto written = cw::test::writeTinyGguf(path);
    ASSERT_TRUE(written.ok()) << written.error().message;
    auto t = cw::engine::openTokenizer(path);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->vocabSize(), 128);
    EXPECT_EQ(t->specialIds().eos, 122);
    EXPECT_EQ(t->specialIds().imStart, 121);
    EXPECT_TRUE(t->isSpecial(122)); // token type 3 (control)
    // Letters are single-byte tokens; the fixture's merges name "ab", which the vocabulary
    // lacks, so they are skipped as llama.cpp does; control tokens are matched in the text.
    EXPECT_EQ(t->encode("abc<|im_end|>"), (std::vector<std::int32_t> { 0, 1, 2, 122 }));
    EXPECT_EQ(t->decode(std::vector<std::int32_t> { 0, 1, 2, 122 }), "abc<|im_end|>");
}

TEST(GgufTokenizer, openTokenizerNamesAFileThatIsNoModel)
{
    const std::string path = std::string(CW_TEST_BINARY_DIR) + "/not_a_model.bin";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("hello", f);
    std::fclose(f);
    auto t = cw::engine::openTokenizer(path);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message.find("not_a_model.bin"), std::string::npos);
}
