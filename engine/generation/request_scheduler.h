#pragma once

#include "engine/common/result.h"
#include "engine/generation/generator.h"
#include "engine/sampling/grammar_constraint.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cw::engine {

// One answer to generate for a caller that arrives at any time (a server's client).
struct ScheduledRequest {
    std::vector<std::int32_t> prompt;
    sampling::SamplingParams params;
    std::unique_ptr<sampling::GrammarConstraint> constraint; // optional
    // Text as it becomes safe to show, on the scheduler's thread; false cancels the request.
    TextCallback onText;
    // Called exactly once, on the scheduler's thread, when the request ends: its result, or
    // the engine's error (the step it was in failed).
    std::function<void(Result<GenerationResult>)> onFinished;
};

struct SchedulerOptions {
    std::size_t maxActive = 8; // sequences decoded together
    std::size_t maxQueued = 64; // may wait beyond maxActive; more is refused (QueueFull)
    // Prefix sharing: a prompt that shares at least this many tokens with a recent prompt
    // gets the shared part prefilled once into a cached root that later prompts fork.
    std::size_t minSharedPrefix = 32;
    std::size_t prefixCacheEntries = 4;
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
};

// Continuous batching over one Model: requests join and leave between model steps, each
// step packs every active request's next decode token and as much pending prompt as a step's
// budget allows (as generateBatch does for a fixed set). Long shared prompt prefixes (a
// system prompt, a contract's passages) are prefilled once into copy-on-write roots.
// The model belongs to the scheduler's thread while it lives.
class RequestScheduler {
public:
    // The model needs state slots for maxActive + prefixCacheEntries + 1 sequences.
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
    // Queues a request. Refused (onFinished not called) when the params or the prompt are
    // invalid or the queue is full.
    Submitted submit(ScheduledRequest request);
    // Stops a request within one step (its onFinished reports it cancelled). Unknown ids
    // (already finished) are ignored.
    void cancel(std::uint64_t id);

    SchedulerStats stats() const;
    const SchedulerOptions& options() const { return m_options; }

private:
    struct Slot;
    struct PrefixRoot;

    void run();
    void admit(std::vector<std::unique_ptr<Slot>>& fresh);
    std::unique_ptr<Sequence> sequenceFor(Slot& slot, std::vector<std::unique_ptr<Slot>>& fresh);
    void step();
    bool advance(Slot& slot, std::span<const float> logits, std::string& error);
    void finish(Slot& slot, Result<GenerationResult> result);

    Model& m_model;
    const Tokenizer& m_tokenizer;
    SchedulerOptions m_options;
    std::vector<std::int32_t> m_eos;

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::unique_ptr<Slot>> m_queue; // guarded by m_mutex
    std::vector<std::uint64_t> m_cancelled; // guarded by m_mutex
    bool m_stopping = false; // guarded by m_mutex
    std::uint64_t m_nextId = 1; // guarded by m_mutex
    std::size_t m_inFlight = 0; // submitted, not yet finished; guarded by m_mutex
    SchedulerStats m_stats; // guarded by m_mutex (copied out by stats())

    // The scheduler thread's own.
    std::vector<std::unique_ptr<Slot>> m_active;
    std::vector<std::unique_ptr<PrefixRoot>> m_roots; // most recently used last
    std::deque<std::vector<std::int32_t>> m_recentPrompts;
    std::thread m_thread;
};

} // namespace cw::engine
