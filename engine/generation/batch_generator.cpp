#include "engine/generation/batch_generator.h"

#include "engine/generation/end_of_turn.h"
#include "engine/sampling/grammar_constraint.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

namespace cw::engine {

namespace {

using Clock = std::chrono::steady_clock;

// Prompt tokens fed per model step, over all requests together: bounds the time one step
// takes, so a cancel is seen soon even while long suffixes are prefilled.
constexpr std::size_t kPromptTokensPerStep = 256;

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// One request in flight: its sequence and the per-request sampling state.
struct Slot {
    Slot(BatchRequest& r, const Tokenizer& tokenizer, std::vector<std::int32_t> eos)
        : request(&r)
        , sampler(r.params)
        , stop(r.params, std::move(eos))
        , detokenizer(tokenizer, true)
    {
    }

    BatchRequest* request;
    std::unique_ptr<Sequence> sequence;
    sampling::Sampler sampler;
    sampling::StopCondition stop;
    StreamingDetokenizer detokenizer;
    GenerationResult result;
    std::size_t fed = 0; // prompt tokens in the sequence (the shared prefix included)
    std::optional<std::int32_t> pending; // sampled, not yet fed
    Clock::time_point admitted;
    std::optional<Clock::time_point> firstToken;
    bool done = false;
};

// Feeds `prompt[from, to)` to the sequence in chunks, checking the cancel flag between them.
// Returns false when cancelled.
Result<bool> prefillChunked(Model& model, Sequence& sequence, std::span<const std::int32_t> tokens,
    const std::function<bool()>& cancelled)
{
    for (std::size_t at = 0; at < tokens.size(); at += kPromptTokensPerStep) {
        if (cancelled && cancelled())
            return false;
        const std::size_t n = std::min(kPromptTokensPerStep, tokens.size() - at);
        const ForwardRequest request { &sequence, tokens.subspan(at, n), false };
        auto logits = model.step(std::span<const ForwardRequest>(&request, 1));
        if (!logits)
            return logits.error();
    }
    return true;
}

} // namespace

std::size_t sharedPrefixLength(std::span<const std::vector<std::int32_t>* const> prompts)
{
    if (prompts.empty())
        return 0;
    std::size_t shared = prompts[0]->size();
    for (const auto* p : prompts.subspan(1)) {
        const auto mismatch = std::mismatch(prompts[0]->begin(),
            prompts[0]->begin() + std::ptrdiff_t(std::min(shared, p->size())), p->begin());
        shared = std::size_t(mismatch.first - prompts[0]->begin());
    }
    return shared;
}

Result<BatchResult> generateBatch(Model& model, const Tokenizer& tokenizer,
    std::span<BatchRequest> requests, const BatchOptions& options)
{
    const std::int64_t context = model.hparams().contextLength;
    std::vector<const std::vector<std::int32_t>*> prompts;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const BatchRequest& r = requests[i];
        if (r.prompt.empty())
            return makeError("request " + std::to_string(i) + ": the prompt is empty");
        if (context > 0 && std::int64_t(r.prompt.size()) >= context)
            return makeError("request " + std::to_string(i) + ": the prompt has "
                + std::to_string(r.prompt.size()) + " tokens; the model's context is "
                + std::to_string(context));
        if (auto valid = r.params.validate(std::int32_t(model.vocabSize())); !valid)
            return makeError("request " + std::to_string(i) + ": " + valid.error().message);
        prompts.push_back(&r.prompt);
    }
    BatchResult batch;
    batch.results.resize(requests.size());
    if (requests.empty())
        return batch;

    // Every request keeps at least one token of its own to feed, so that its first step
    // returns the logits its first answer token is drawn from.
    std::size_t shared = sharedPrefixLength(prompts);
    for (const auto* p : prompts)
        shared = std::min(shared, p->size() - 1);
    batch.sharedPrefixTokens = std::int64_t(shared);

    const auto prefillStart = Clock::now();
    std::unique_ptr<Sequence> root;
    if (shared > 0) {
        root = model.newSequence();
        auto fed = prefillChunked(model, *root,
            std::span<const std::int32_t>(requests[0].prompt).first(shared), options.cancelled);
        if (!fed)
            return fed.error();
        batch.promptTokens += std::int64_t(shared);
        if (!*fed) {
            batch.cancelled = true;
            for (auto& r : batch.results)
                r.cancelled = true;
            return batch;
        }
    }
    batch.prefillSeconds = secondsSince(prefillStart);

    const std::vector<std::int32_t> eos = endOfTurnIds(tokenizer, model);
    std::vector<std::unique_ptr<Slot>> slots;
    slots.reserve(requests.size());
    for (BatchRequest& r : requests)
        slots.push_back(std::make_unique<Slot>(r, tokenizer, eos));
    const std::size_t maxActive = options.maxActive == 0 ? slots.size() : options.maxActive;
    std::size_t nextToAdmit = 0;
    std::vector<Slot*> active;

    auto finish = [&](std::size_t index, Slot& slot) {
        GenerationResult& result = slot.result;
        if (result.reason == sampling::StopReason::None && !result.cancelled) {
            const std::string tail = slot.detokenizer.flush();
            if (!tail.empty())
                slot.stop.add(-1, tail);
            const std::string rest = slot.stop.takeReleasable();
            if (!rest.empty() && slot.request->onText)
                slot.request->onText(rest);
        }
        result.text = slot.stop.text();
        result.promptTokens = std::int64_t(slot.request->prompt.size());
        if (slot.firstToken) {
            result.prefillSeconds
                = std::chrono::duration<double>(*slot.firstToken - slot.admitted).count();
            result.decodeSeconds = secondsSince(*slot.firstToken);
        }
        slot.done = true;
        slot.sequence.reset(); // its KV blocks go back to the pool for the next request
        batch.generatedTokens += std::int64_t(result.ids.size());
        batch.results[index] = result;
        if (options.onFinished)
            options.onFinished(index, batch.results[index]);
    };

    // Draws the next token of a slot from its logits row; false when the slot has ended.
    auto advance = [&](Slot& slot, std::span<const float> logits) -> Result<bool> {
        GenerationResult& result = slot.result;
        auto token = slot.sampler.sample(
            logits, slot.request->prompt, result.ids, slot.request->constraint);
        if (!token)
            return token.error();
        if (slot.request->constraint) {
            if (auto accepted = slot.request->constraint->accept(*token); !accepted)
                return accepted.error();
        }
        if (!slot.firstToken)
            slot.firstToken = Clock::now();
        result.ids.push_back(*token);
        const std::string piece = slot.detokenizer.push(*token);
        const auto reason = slot.stop.add(*token, piece);
        const std::string releasable = slot.stop.takeReleasable();
        if (!releasable.empty() && slot.request->onText && !slot.request->onText(releasable)) {
            result.cancelled = true;
            return false;
        }
        if (reason != sampling::StopReason::None) {
            result.reason = reason;
            return false;
        }
        if (context > 0 && slot.sequence->length() + 1 > context)
            return false;
        slot.pending = *token;
        return true;
    };

    const auto decodeStart = Clock::now();
    while (true) {
        while (active.size() < maxActive && nextToAdmit < slots.size()) {
            Slot& slot = *slots[nextToAdmit++];
            slot.sequence = root ? model.fork(*root) : model.newSequence();
            slot.fed = shared;
            slot.admitted = Clock::now();
            active.push_back(&slot);
        }
        if (nextToAdmit == slots.size())
            root.reset();
        if (active.empty())
            break;
        if (options.cancelled && options.cancelled()) {
            batch.cancelled = true;
            for (std::size_t i = 0; i < slots.size(); ++i) {
                Slot& slot = *slots[i];
                if (slot.done)
                    continue;
                slot.result.cancelled = true;
                slot.result.text = slot.stop.text();
                slot.result.promptTokens = std::int64_t(slot.request->prompt.size());
                batch.generatedTokens += std::int64_t(slot.result.ids.size());
                batch.results[i] = slot.result;
            }
            break;
        }
        // Decode tokens of every slot past its prompt, and as much prompt as the step's
        // budget allows, in one step.
        std::vector<ForwardRequest> forward;
        std::vector<Slot*> stepped;
        std::size_t promptBudget = kPromptTokensPerStep;
        for (Slot* slot : active) {
            if (slot->pending) {
                forward.push_back({ slot->sequence.get(),
                    std::span<const std::int32_t>(&*slot->pending, 1), false });
                stepped.push_back(slot);
                continue;
            }
            const std::size_t remaining = slot->request->prompt.size() - slot->fed;
            const std::size_t n = std::min(remaining, promptBudget);
            if (n == 0)
                continue;
            promptBudget -= n;
            forward.push_back({ slot->sequence.get(),
                std::span<const std::int32_t>(slot->request->prompt).subspan(slot->fed, n),
                false });
            stepped.push_back(slot);
        }
        auto logits = model.step(forward);
        if (!logits)
            return logits.error();
        ++batch.steps;
        const std::size_t vocab = std::size_t(model.vocabSize());
        for (std::size_t row = 0; row < stepped.size(); ++row) {
            Slot& slot = *stepped[row];
            if (slot.pending) {
                slot.pending.reset();
            } else {
                const std::size_t n = forward[row].tokens.size();
                slot.fed += n;
                batch.promptTokens += std::int64_t(n);
                if (slot.fed < slot.request->prompt.size())
                    continue; // more of its prompt next step
            }
            auto going = advance(slot, std::span<const float>(*logits).subspan(row * vocab, vocab));
            if (!going)
                return going.error();
            if (!*going) {
                const std::size_t index = std::size_t(slot.request - requests.data());
                finish(index, slot);
            }
        }
        std::erase_if(active, [](const Slot* s) { return s->done; });
    }
    batch.decodeSeconds = secondsSince(decodeStart);
    return batch;
}

} // namespace cw::engine
