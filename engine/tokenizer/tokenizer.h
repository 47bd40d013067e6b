#pragma once

#include "engine/common/result.h"
#include "engine/common/text_span.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/unicode_normalizer.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cw::engine {

struct TokenizerSource;

// A token matched in the text before BPE runs (tokenizer.json "added_tokens", GGUF token
// types 3 "control" and 4 "user defined"). `special` tokens are the ones decode can skip.
struct AddedToken {
    std::string content;
    std::int32_t id = 0;
    bool special = false;
};

// Ids of the tokens the engine and the chat template need; unset when the vocabulary
// has no such token.
struct SpecialTokenIds {
    std::optional<std::int32_t> bos, eos, pad;
    std::optional<std::int32_t> endOfText; // <|endoftext|>
    std::optional<std::int32_t> imStart, imEnd; // <|im_start|>, <|im_end|>
    std::optional<std::int32_t> thinkStart, thinkEnd; // <think>, </think>
};

// What a tokenizer is made of, in raw bytes (the byte-level spelling already undone).
// Loaders (tokenizer_loader.cpp) fill it from tokenizer.json or GGUF metadata.
struct TokenizerDefinition {
    std::vector<std::optional<std::string>> pieces; // by id; nullopt: no ordinary token
    std::vector<std::pair<std::string, std::string>> merges; // by rank, raw bytes
    std::vector<AddedToken> addedTokens;
    std::string preTokenizerPattern = PreTokenizer::kQwen2Pattern;
    NormalizationForm normalization = NormalizationForm::None;
    // tokenizer.json refuses a merge whose tokens are not in the vocabulary (as Hugging Face
    // tokenizers does); GGUF metadata skips it (as llama.cpp does).
    bool skipUnknownMerges = false;
    std::optional<std::int32_t> bos, eos, pad;
    std::string sourceName; // for messages: the file it came from
};

// Byte-level BPE as Hugging Face tokenizers runs it for Qwen: added tokens first
// (leftmost, longest), then the normalizer, the regex pre-tokenizer, and BPE merges by
// rank on each piece's bytes. Encoding is thread-safe (a shared piece cache with a lock).
class Tokenizer {
public:
    static Result<Tokenizer> build(TokenizerDefinition definition);

    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;
    ~Tokenizer();

    // Invalid UTF-8 in `text` is first replaced by U+FFFD (as when bytes are decoded
    // with errors="replace"), so any byte string has a defined encoding.
    std::vector<std::int32_t> encode(std::string_view text) const;
    // The same, except that special (control) tokens are not matched where they overlap a
    // span of `plainText` (sorted, not overlapping): text a user typed, which must stay text
    // (Hugging Face's split_special_tokens for those parts). Added tokens that are not
    // special still match, as they do there.
    std::vector<std::int32_t> encode(
        std::string_view text, std::span<const TextSpan> plainText) const;

    // The bytes of the tokens, concatenated; unknown ids are skipped.
    std::string decodeBytes(std::span<const std::int32_t> ids, bool skipSpecial = false) const;
    // decodeBytes with invalid UTF-8 replaced by U+FFFD (what transformers' decode gives).
    std::string decode(std::span<const std::int32_t> ids, bool skipSpecial = false) const;

    std::int32_t vocabSize() const { return std::int32_t(m_pieces.size()); }
    bool isValidId(std::int32_t id) const { return id >= 0 && id < vocabSize(); }
    // Raw bytes of one token (empty for unknown ids).
    std::string_view tokenBytes(std::int32_t id) const;
    bool isSpecial(std::int32_t id) const;
    bool isAdded(std::int32_t id) const;
    // The id of an added token with this content, or of the ordinary token with these bytes.
    std::optional<std::int32_t> tokenId(std::string_view content) const;

    const SpecialTokenIds& specialIds() const { return m_special; }
    const std::vector<AddedToken>& addedTokens() const { return m_added; }
    NormalizationForm normalization() const { return m_normalization; }

private:
    Tokenizer();
    void encodeOrdinary(std::string_view text, std::vector<std::int32_t>& out) const;
    void encodePiece(std::string_view piece, std::vector<std::int32_t>& out) const;
    void runBpe(std::string_view piece, std::vector<std::int32_t>& out) const;

    enum class Kind : std::uint8_t { None, Ordinary, Added, Special };

    std::vector<std::string> m_pieces; // raw bytes by id
    std::vector<Kind> m_kinds;
    std::unordered_map<std::string, std::int32_t> m_ordinaryIds;
    std::array<std::int32_t, 256> m_byteIds {};
    struct MergeResult {
        std::int32_t rank;
        std::int32_t id;
    };
    std::unordered_map<std::uint64_t, MergeResult> m_merges; // (left << 32 | right)
    std::vector<AddedToken> m_added;
    std::array<std::vector<std::uint32_t>, 256> m_addedByFirstByte; // longest first
    PreTokenizer m_preTokenizer;
    NormalizationForm m_normalization = NormalizationForm::None;
    SpecialTokenIds m_special;
    struct PieceCache;
    std::unique_ptr<PieceCache> m_cache;
};

// Tokenizer from a Hugging Face tokenizer.json (tokenizer_config.json beside it, or at
// `configPath`, supplies eos/pad/bos). Errors name the file and what is wrong.
Result<Tokenizer> loadTokenizerJson(const std::string& path, const std::string& configPath = {});
// The same from text already in memory; `sourceName` is used in messages.
Result<Tokenizer> parseTokenizerJson(
    std::string_view json, std::string_view configJson, const std::string& sourceName);
// Tokenizer from what a model loader found (tokenizer.json path or GGUF metadata).
Result<Tokenizer> tokenizerFromSource(const TokenizerSource& source);
// The tokenizer of whatever the user points at, without loading weights: a tokenizer.json
// (tokenizer_config.json beside it is used when present), a folder holding tokenizer.json,
// or a GGUF file (its tokenizer.ggml.* metadata, through openModel).
Result<Tokenizer> openTokenizer(const std::string& path);

} // namespace cw::engine
