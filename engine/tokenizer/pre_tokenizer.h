#pragma once

#include "engine/common/result.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace cw::engine {

// The regex pre-tokenizer (tokenizers' Split with behavior "Isolated"): cuts text into
// the pieces BPE works on, each regex match one piece and the text between matches one
// piece. PCRE2 in UTF mode with Unicode properties, compiled once (JIT where available).
class PreTokenizer {
public:
    // The pattern Qwen2/Qwen3/Qwen3.5 tokenizers use (GGUF tokenizer.ggml.pre "qwen2").
    static const std::string kQwen2Pattern;

    // `pattern` is written in the Oniguruma/Rust dialect of tokenizer.json; \s and \S are
    // given Oniguruma's meaning (Unicode White_Space, which includes U+0085).
    static Result<PreTokenizer> create(std::string_view pattern);

    // Calls `piece` for each piece of valid UTF-8 `text`, in order; the pieces cover it.
    void split(std::string_view text, const std::function<void(std::string_view)>& piece) const;

private:
    struct Compiled;
    std::shared_ptr<const Compiled> m_compiled;
};

} // namespace cw::engine
