// libFuzzer target for the tokenizer. The first byte picks what the rest is:
//   0: text to encode (any bytes, invalid UTF-8 included: replaced by U+FFFD, never a crash),
//      then decoded again; ASCII text must come back unchanged;
//   1: little-endian int32 ids to decode, whole and through the streaming detokenizer,
//      which must agree and emit only valid UTF-8;
//   2: a tokenizer.json to parse (errors are values, never crashes);
//   3: chat messages (split at NUL bytes) rendered by the Qwen3.6 and Qwen3 flavours.
// The tokenizer is the tiny Qwen-style one of tests/data/golden (same regex, NFC, byte-level
// BPE as Qwen3's, but loads in milliseconds).
#include "engine/chat/chat_template.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

const cw::engine::Tokenizer& tokenizer()
{
    static const std::unique_ptr<cw::engine::Tokenizer> t = [] {
        auto loaded = cw::engine::loadTokenizerJson(
            std::string(CW_TEST_DATA_DIR) + "/golden/tokenizer/tokenizer.json");
        if (!loaded) {
            std::fprintf(stderr, "fuzz_tokenizer: %s\n", loaded.error().message.c_str());
            std::abort();
        }
        return std::make_unique<cw::engine::Tokenizer>(std::move(loaded.value()));
    }();
    return *t;
}

void check(bool condition, const char* what)
{
    if (!condition) {
        std::fprintf(stderr, "fuzz_tokenizer: %s\n", what);
        std::abort();
    }
}

void fuzzEncode(std::string_view text)
{
    const auto& t = tokenizer();
    const auto ids = t.encode(text);
    for (const auto id : ids)
        check(t.isValidId(id), "encode produced an id outside the vocabulary");
    const std::string decoded = t.decode(ids);
    check(cw::engine::utf8::isValid(decoded), "decode produced invalid UTF-8");
    bool ascii = true;
    for (const char c : text)
        ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii)
        check(decoded == text, "ASCII text did not survive encode+decode");
}

void fuzzDecode(std::string_view bytes)
{
    const auto& t = tokenizer();
    std::vector<std::int32_t> ids(bytes.size() / 4);
    if (!ids.empty())
        std::memcpy(ids.data(), bytes.data(), ids.size() * 4);
    for (auto& id : ids) // mostly valid ids, some not
        id = (id & 0x40000000) ? id : std::int32_t(std::uint32_t(id) % 700u);
    const std::string whole = t.decode(ids);
    cw::engine::StreamingDetokenizer stream(t);
    std::string streamed;
    for (const auto id : ids) {
        const std::string piece = stream.push(id);
        check(cw::engine::utf8::isValid(piece), "streaming emitted invalid UTF-8");
        streamed += piece;
    }
    streamed += stream.flush();
    check(streamed == whole, "streaming and whole decode differ");
}

void fuzzChat(std::string_view bytes)
{
    static const char* roles[] = { "system", "user", "assistant", "tool" };
    std::vector<cw::engine::ChatMessage> messages;
    std::size_t pos = 0;
    while (pos <= bytes.size() && messages.size() < 16) {
        const auto end = std::min(bytes.find('\0', pos), bytes.size());
        const std::string_view part = bytes.substr(pos, end - pos);
        const char* role = roles[part.empty() ? 1 : static_cast<unsigned char>(part[0]) % 4];
        messages.push_back({ role, cw::engine::utf8::sanitize(part), std::nullopt });
        pos = end + 1;
    }
    cw::engine::ChatOptions options;
    options.enableThinking = bytes.size() % 2 == 0;
    for (const auto flavour :
        { cw::engine::ChatTemplateFlavour::Qwen3, cw::engine::ChatTemplateFlavour::Qwen36 }) {
        const auto text = cw::engine::ChatTemplate(flavour).render(messages, options);
        if (text)
            check(cw::engine::utf8::isValid(*text), "chat template produced invalid UTF-8");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 4) {
    case 0:
        fuzzEncode(rest);
        break;
    case 1:
        fuzzDecode(rest);
        break;
    case 2:
        (void)cw::engine::parseTokenizerJson(rest, "", "fuzz.json");
        break;
    default:
        fuzzChat(rest);
        break;
    }
    return 0;
}
