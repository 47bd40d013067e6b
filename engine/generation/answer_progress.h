#pragma once

#include "engine/common/result.h"
#include "engine/generation/generation_result.h"
#include "engine/sampling/sampler.h"
#include "engine/sampling/stop_condition.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "kernels/token_draw.h"

#include <cstdint>
#include <span>
#include <vector>

namespace cw::sampling {
class GrammarConstraint;
}

namespace cw::engine {

class Tokenizer;

// One answer as it is written: how its next token is chosen (sampler, grammar), when it ends
// (EOS and stop tokens, stop strings, max tokens, the context, a cancel from its reader) and
// which text is safe to stream. The scheduler keeps one per request; this is the only place
// those rules live.
class AnswerProgress {
public:
    // `constraint` is not owned and may be null; `context` is the model's configured context.
    AnswerProgress(const sampling::SamplingParams& params, sampling::GrammarConstraint* constraint,
        TextCallback onText, const Tokenizer& tokenizer, std::vector<std::int32_t> eos,
        std::int64_t context);

    // True when the next token needs the logits on the host: sampled, penalised, biased or
    // grammar-masked. Otherwise the model's greedy token (chosen on the device) is the answer's.
    bool needsLogits() const { return m_needsLogits; }
    // True when the next token is a plain draw (temperature, top-k, top-p, min-p; no penalty,
    // bias or grammar) that the backend can make where the logits are; nextDraw() then gives
    // it, taking the draw's uniform from the answer's seeded stream.
    bool drawable() const { return m_drawable; }
    kernels::TokenDraw nextDraw();
    // True when the next token is greedy under a grammar with nothing else changing the
    // logits: the device's pick (the argmax, lowest id among equals) is the answer's token
    // whenever the grammar allows it (allowsGreedy), and only otherwise do the logits cross.
    bool greedyChecked() const { return m_greedyChecked; }
    bool allowsGreedy(std::int32_t token) const;

    // Draws the next token from a logits row (sampler, then grammar). Errors: nothing can be
    // sampled, the grammar refuses every token.
    Result<std::int32_t> choose(
        std::span<const float> logits, std::span<const std::int32_t> prompt);

    // Adds the chosen token: the grammar follows it, its text is streamed, the stop rules and
    // the context are applied. `sequenceLength` is the tokens the sequence holds, so the
    // token would be fed at that position. Returns true while the answer goes on (the token is
    // to be fed next step), false when it has ended.
    Result<bool> add(std::int32_t token, std::int64_t sequenceLength);

    // Ends the answer: streams what was held back (unless cancelled) and fills the text.
    void finish(bool cancelled);

    GenerationResult& result() { return m_result; }
    const std::vector<std::int32_t>& generated() const { return m_result.ids; }

private:
    sampling::Sampler m_sampler;
    sampling::StopCondition m_stop;
    StreamingDetokenizer m_detokenizer;
    sampling::GrammarConstraint* m_constraint;
    TextCallback m_onText;
    std::int64_t m_context;
    bool m_needsLogits;
    bool m_drawable;
    bool m_greedyChecked;
    GenerationResult m_result;
};

} // namespace cw::engine
