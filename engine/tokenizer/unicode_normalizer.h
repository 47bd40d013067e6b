#pragma once

#include <string>
#include <string_view>

namespace cw::engine {

// Unicode normalization forms a tokenizer.json may ask for. NFC is what Qwen uses.
enum class NormalizationForm { None, Nfc, Nfd, Nfkc, Nfkd };

// Whether this build can normalize (ICU found at configure time).
bool unicodeNormalizationAvailable();

// `text` (valid UTF-8) in the given form. ASCII text is returned unchanged without work.
// Without ICU the text is returned unchanged.
std::string normalizeUnicode(std::string_view text, NormalizationForm form);

} // namespace cw::engine
