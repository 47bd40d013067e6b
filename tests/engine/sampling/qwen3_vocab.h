#pragma once

#include "engine/sampling/token_vocabulary.h"

#include <memory>
#include <string>

namespace cw::sampling::test {

// Loads tests/data/sampling/qwen3_vocab.bin.xz (see make_vocab.py there): the real Qwen3
// vocabulary as raw token bytes. Added tokens (ids >= 151643) are control tokens; EOS is
// <|im_end|> and <|endoftext|>.
Result<std::shared_ptr<const TokenVocabulary>> loadQwen3Vocabulary(const std::string& path);

constexpr int32_t kQwen3EndOfText = 151643;
constexpr int32_t kQwen3ImEnd = 151645;

} // namespace cw::sampling::test
