#include "engine/generation/generator.h"

#include "engine/generation/end_of_turn.h"
#include "engine/sampling/grammar_constraint.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"

#include <chrono>

namespace cw::engine {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

Result<GenerationResult> generate(Model& model, const Tokenizer& tokenizer,
    std::span<const std::int32_t> prompt, const sampling::SamplingParams& params,
    const TextCallback& onText, sampling::GrammarConstraint* constraint)
{
    if (auto valid = params.validate(std::int32_t(model.vocabSize())); !valid)
        return valid.error();
    GenerationResult result;
    result.promptTokens = std::int64_t(prompt.size());
    auto sequence = model.newSequence();
    const auto prefillStart = std::chrono::steady_clock::now();
    auto logits = model.prefill(*sequence, prompt, false);
    if (!logits)
        return logits.error();
    result.prefillSeconds = secondsSince(prefillStart);

    sampling::Sampler sampler(params);
    sampling::StopCondition stop(params, endOfTurnIds(tokenizer, model));
    StreamingDetokenizer detokenizer(tokenizer, true);
    const std::int64_t context = model.hparams().contextLength;
    const auto decodeStart = std::chrono::steady_clock::now();
    while (true) {
        auto token = sampler.sample(*logits, prompt, result.ids, constraint);
        if (!token)
            return token.error();
        // The constraint follows the answer; without this it would judge every token
        // against the empty output.
        if (constraint) {
            if (auto accepted = constraint->accept(*token); !accepted)
                return accepted.error();
        }
        result.ids.push_back(*token);
        const std::string piece = detokenizer.push(*token);
        const auto reason = stop.add(*token, piece);
        const std::string releasable = stop.takeReleasable();
        if (!releasable.empty() && onText && !onText(releasable)) {
            result.cancelled = true;
            break;
        }
        if (reason != sampling::StopReason::None) {
            result.reason = reason;
            break;
        }
        if (context > 0 && sequence->length() + 1 > context)
            break;
        const std::int32_t next = *token;
        const ForwardRequest request { sequence.get(), std::span<const std::int32_t>(&next, 1),
            false };
        logits = model.step(std::span<const ForwardRequest>(&request, 1));
        if (!logits)
            return logits.error();
    }
    result.decodeSeconds = secondsSince(decodeStart);
    if (result.reason == sampling::StopReason::None && !result.cancelled) {
        const std::string tail = detokenizer.flush();
        if (!tail.empty())
            stop.add(-1, tail);
        const std::string rest = stop.takeReleasable();
        if (!rest.empty() && onText)
            onText(rest);
    }
    result.text = stop.text();
    return result;
}

} // namespace cw::engine
