#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cw::engine::utf8 {

// UTF-8 helpers shared by the tokenizer, the detokenizers and the chat template.
// "Invalid" follows the Unicode standard's definition (no overlongs, no surrogates,
// nothing above U+10FFFF); replacement follows the "maximal subpart" practice that
// Rust's String::from_utf8_lossy and Python's bytes.decode(errors="replace") share:
// each maximal prefix of a would-be sequence that cannot be completed becomes one U+FFFD.

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

// Appends the UTF-8 encoding of a code point (which must be a valid scalar value).
void appendCodePoint(std::string& out, char32_t cp);

// Length of the valid sequence starting at text[pos], or 0 if the bytes there do not
// start a complete valid sequence. When 0, *maximalSubpart (if given) is the number of
// bytes to replace by one U+FFFD, and *truncated tells whether the bytes are a valid but
// unfinished prefix that ends exactly at the end of text.
std::size_t sequenceLength(
    std::string_view text, std::size_t pos, std::size_t* maximalSubpart, bool* truncated);

// Decodes the valid sequence at text[pos] (length from sequenceLength).
char32_t decodeAt(std::string_view text, std::size_t pos, std::size_t length);

bool isValid(std::string_view text);

// Text with every invalid part replaced by U+FFFD (unchanged when already valid).
std::string sanitize(std::string_view text);

// Appends the longest prefix of `bytes` that cannot change with more bytes coming:
// complete sequences as they are, impossible ones as U+FFFD; returns how many bytes were
// consumed. A trailing unfinished (but so far valid) sequence is left unconsumed.
std::size_t appendComplete(std::string& out, std::string_view bytes);

} // namespace cw::engine::utf8
