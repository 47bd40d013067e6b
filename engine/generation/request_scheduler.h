#pragma once

#include "engine/common/result.h"
#include "engine/generation/generation_result.h"
#include "engine/generation/prefix_cache.h"
#include "engine/runtime/model.h"
#include "engine/sampling/grammar_constraint.h"
#include "kernels/cpu/thread_pool.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cw::engine {

class Tokenizer;

// One answer to generate, from any caller at any time.
struct ScheduledRequest {
    std::vector<std::int32_t> prompt;
    sampling::SamplingParams params;
    std::unique_ptr<sampling::GrammarConstraint> constraint; // optional
    // Text as it becomes safe to show, on the scheduler's thread; false cancels the request.
    TextCallback onText;
    // After each step that fed part of the prompt: tokens in the sequence so far (a cached
    // prefix included) and the prompt's length, on the scheduler's thread; false cancels.
    std::function<bool(std::size_t fed, std::size_t total)> onPromptProgress;
    // Called exactly once, on the scheduler's thread, when the request ends: its result, or
    // the engine's error (the step it was in failed).
    std::function<void(Result<GenerationResult>)> onFinished;
};

struct SchedulerOptions {
    std::size_t maxActive = 8; // sequences in the running batch
    std::size_t maxQueued = 64; // may wait beyond maxActive; more is refused (QueueFull)
    // Prefix caching: a prompt that shares at least this many tokens with a recent or waiting
    // prompt gets the shared whole blocks kept in the prefix cache, which later prompts fork.
    std::size_t minSharedPrefix = 32;
    std::size_t prefixCacheEntries = 4; // each holds a recurrent-state slot
    // Tokens one step feeds at most over every request: one per running decode first, then
    // prompt chunks. 0: the model's prefill chunk (4,096 on a GPU, 512 on the CPU). Kept
    // within [maxActive + 1, the prefill chunk].
    std::size_t stepTokens = 0;
    // Sampled requests without penalties, biases or a grammar have their token drawn by the
    // backend where the logits are (only ids cross; kernels/token_draw.h). Default: on a GPU,
    // where it saves a megabyte of logits and a pass over them on the host a token; on the
    // CPU the host's sampler costs as much and keeps its own seeded tokens.
    std::optional<bool> backendDraws;
};

struct SchedulerStats {
    std::size_t queued = 0;
    std::size_t active = 0;
    std::size_t cachedPrefixes = 0;
    std::int64_t kvBlocksInUse = 0;
    std::int64_t promptTokens = 0; // fed through the model, all time
    std::int64_t reusedPromptTokens = 0; // taken from a cached prefix instead
    std::int64_t generatedTokens = 0;
    std::int64_t steps = 0;
    std::size_t mostRequestsInOneStep = 0; // the widest step so far
};

// The engine core of one loaded model (vLLM's is the anchor): every caller — generate,
// testgen, the desktop review and code panel, clausewright-server — submits requests here
// and reads their streams; nothing else runs a generation loop. One thread owns the model
// and runs continuous batching: requests join and leave between steps; each step packs
// every running decode's next token and then prompt chunks up to the step's token budget,
// so a long prompt (a shared prefix too) is prefilled chunk by chunk between decode tokens
// and never stalls them. Greedy requests take their token from the device, and on a GPU so
// do plainly sampled ones (a draw made there; only the ids cross); penalised, biased and
// grammar-masked ones get their logits rows. Stop conditions and the
// context limit are AnswerProgress's; a cancel lands within one step, mid-prefill too.
class RequestScheduler {
public:
    // On a GPU the model needs state slots for maxActive + prefixCacheEntries + 1 sequences.
    RequestScheduler(Model& model, const Tokenizer& tokenizer, SchedulerOptions options = {});
    ~RequestScheduler(); // cancels what is left (each gets onFinished) and joins the thread

    RequestScheduler(const RequestScheduler&) = delete;
    RequestScheduler& operator=(const RequestScheduler&) = delete;

    enum class Refusal { None, Invalid, QueueFull };
    struct Submitted {
        std::uint64_t id = 0;
        Refusal refusal = Refusal::None;
        std::string message; // why it was refused
    };
    // Queues a request (moved from only when taken). Refused (onFinished not called, the
    // request left as it was) when the params or the prompt are invalid (empty, or no room
    // left in the context) or the queue is full.
    Submitted submit(ScheduledRequest&& request);
    // Stops a request within one step (its onFinished reports it cancelled), queued, in
    // prefill or decoding. Unknown ids (already finished) are ignored.
    void cancel(std::uint64_t id);

    SchedulerStats stats() const;
    const SchedulerOptions& options() const { return m_options; }
    std::size_t stepTokens() const { return m_stepTokens; }
    const Model& model() const { return m_model; }

private:
    struct Slot;
    using Clock = std::chrono::steady_clock;

    void run();
    void takeCancels();
    void place(Slot& slot);
    std::unique_ptr<Sequence> sequenceFrom(const Sequence* parent);
    bool leaderLives(std::uint64_t key) const;
    void resumeWaiting();
    void step();
    ForwardRequest rowFor(Slot& slot, std::span<const std::int32_t> tokens, bool choosing);
    // Per row of the step, the token of each row chosen on the host, side by side (each is a
    // pass over the whole vocabulary): those whose logits crossed with the step (sampled or
    // grammar-masked requests) and the `checked` rows (greedy under a grammar) whose device
    // pick the grammar refused, their logits fetched after the step; a checked row whose pick
    // it allows keeps it.
    std::vector<Result<std::int32_t>> chooseOnHost(const std::vector<Slot*>& stepped,
        const std::vector<ForwardRequest>& forward, const std::vector<bool>& checked,
        const StepOutput& out);
    bool afterStep(Slot& slot, std::size_t promptFed, const Result<std::int32_t>* chosen,
        const StepOutput& out, std::size_t row);
    void end(Slot& slot, bool cancelled); // reports its result
    void fail(Slot& slot, std::string message); // reports the error
    void publishStats(std::int64_t promptFed, std::int64_t generated, std::size_t width);

    Model& m_model;
    const Tokenizer& m_tokenizer;
    SchedulerOptions m_options;
    std::size_t m_stepTokens = 0;
    std::vector<std::int32_t> m_eos;
    bool m_backendDraws = false;

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::unique_ptr<Slot>> m_queue; // guarded by m_mutex
    std::vector<std::uint64_t> m_cancelled; // guarded by m_mutex
    bool m_stopping = false; // guarded by m_mutex
    std::uint64_t m_nextId = 1; // guarded by m_mutex
    std::size_t m_inFlight = 0; // submitted, not yet finished; guarded by m_mutex
    SchedulerStats m_stats; // guarded by m_mutex (copied out by stats())

    // The scheduler thread's own.
    std::vector<std::unique_ptr<Slot>> m_active; // in the order they joined
    PrefixCache m_cache;
    std::deque<std::vector<std::int32_t>> m_recentPrompts; // to find shared prefixes in
    std::unique_ptr<kernels::ThreadPool> m_choosers; // made at the first step that needs one
    std::thread m_thread;
};

} // namespace cw::engine
