#include "engine/tokenizer/unicode_normalizer.h"

#ifdef CW_HAVE_ICU
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <vector>
#endif

namespace cw::engine {

bool unicodeNormalizationAvailable()
{
#ifdef CW_HAVE_ICU
    return true;
#else
    return false;
#endif
}

std::string normalizeUnicode(std::string_view text, NormalizationForm form)
{
    bool ascii = true;
    for (const char c : text) {
        if (static_cast<unsigned char>(c) >= 0x80) {
            ascii = false;
            break;
        }
    }
    if (form == NormalizationForm::None || ascii)
        return std::string(text);
#ifdef CW_HAVE_ICU
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* normalizer = nullptr;
    switch (form) {
    case NormalizationForm::Nfc:
        normalizer = unorm2_getNFCInstance(&status);
        break;
    case NormalizationForm::Nfd:
        normalizer = unorm2_getNFDInstance(&status);
        break;
    case NormalizationForm::Nfkc:
        normalizer = unorm2_getNFKCInstance(&status);
        break;
    default:
        normalizer = unorm2_getNFKDInstance(&status);
        break;
    }
    if (U_FAILURE(status) || text.size() > 0x3FFFFFFF)
        return std::string(text);
    // UTF-8 -> UTF-16 (ICU's working form).
    std::vector<UChar> wide(text.size() + 1);
    int32_t wideLength = 0;
    u_strFromUTF8(
        wide.data(), int32_t(wide.size()), &wideLength, text.data(), int32_t(text.size()), &status);
    if (U_FAILURE(status))
        return std::string(text);
    if (unorm2_isNormalized(normalizer, wide.data(), wideLength, &status) && U_SUCCESS(status))
        return std::string(text);
    status = U_ZERO_ERROR;
    std::vector<UChar> normalized(std::size_t(wideLength) * 3 + 16);
    const int32_t normalizedLength = unorm2_normalize(normalizer, wide.data(), wideLength,
        normalized.data(), int32_t(normalized.size()), &status);
    if (U_FAILURE(status))
        return std::string(text);
    std::string out(std::size_t(normalizedLength) * 3 + 4, '\0');
    int32_t outLength = 0;
    u_strToUTF8(
        out.data(), int32_t(out.size()), &outLength, normalized.data(), normalizedLength, &status);
    if (U_FAILURE(status))
        return std::string(text);
    out.resize(std::size_t(outLength));
    return out;
#else
    return std::string(text);
#endif
}

} // namespace cw::engine
