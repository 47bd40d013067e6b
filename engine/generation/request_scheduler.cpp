#include "engine/generation/request_scheduler.h"

#include "engine/generation/end_of_turn.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace cw::engine {

namespace {

using Clock = std::chrono::steady_clock;

// Prompt tokens fed per step over all requests: bounds a step's time, so decode tokens of
// the other requests keep flowing while a long prompt is prefilled.
constexpr std::size_t kPromptTokensPerStep = 256;
// Prompts remembered to find shared prefixes in (tokens only: a few KB each).
constexpr std::size_t kRecentPrompts = 16;

std::size_t commonPrefix(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b)
{
    const std::size_t n = std::min(a.size(), b.size());
    return std::size_t(
        std::mismatch(a.begin(), a.begin() + std::ptrdiff_t(n), b.begin()).first - a.begin());
}

} // namespace

struct RequestScheduler::Slot {
    Slot(std::uint64_t i, ScheduledRequest r, const Tokenizer& tokenizer,
        std::vector<std::int32_t> eos)
        : id(i)
        , request(std::move(r))
        , sampler(request.params)
        , stop(request.params, std::move(eos))
        , detokenizer(tokenizer, true)
    {
    }

    std::uint64_t id;
    ScheduledRequest request;
    std::unique_ptr<Sequence> sequence;
    sampling::Sampler sampler;
    sampling::StopCondition stop;
    StreamingDetokenizer detokenizer;
    GenerationResult result;
    std::size_t fed = 0; // prompt tokens in the sequence
    std::optional<std::int32_t> pending; // sampled, not yet fed
    Clock::time_point admitted;
    std::optional<Clock::time_point> firstToken;
    bool cancelRequested = false;
    bool done = false;
};

struct RequestScheduler::PrefixRoot {
    std::vector<std::int32_t> tokens;
    std::unique_ptr<Sequence> sequence;
};

RequestScheduler::RequestScheduler(
    Model& model, const Tokenizer& tokenizer, SchedulerOptions options)
    : m_model(model)
    , m_tokenizer(tokenizer)
    , m_options(options)
    , m_eos(endOfTurnIds(tokenizer, model))
{
    if (m_options.maxActive == 0)
        m_options.maxActive = 1;
    m_thread = std::thread([this] { run(); });
}

RequestScheduler::~RequestScheduler()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

RequestScheduler::Submitted RequestScheduler::submit(ScheduledRequest request)
{
    const std::int64_t context = m_model.contextLength();
    if (request.prompt.empty())
        return { 0, Refusal::Invalid, "the prompt is empty" };
    if (context > 0 && std::int64_t(request.prompt.size()) >= context)
        return { 0, Refusal::Invalid,
            "the prompt has " + std::to_string(request.prompt.size())
                + " tokens; the model's context is " + std::to_string(context) };
    if (auto valid = request.params.validate(std::int32_t(m_model.vocabSize())); !valid)
        return { 0, Refusal::Invalid, valid.error().message };
    std::uint64_t id = 0;
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping)
            return { 0, Refusal::QueueFull, "the server is shutting down" };
        if (m_inFlight >= m_options.maxActive + m_options.maxQueued)
            return { 0, Refusal::QueueFull,
                "the queue is full (" + std::to_string(m_options.maxQueued)
                    + " requests waiting); try again later" };
        id = m_nextId++;
        ++m_inFlight;
        m_queue.push_back(std::make_unique<Slot>(id, std::move(request), m_tokenizer, m_eos));
        m_stats.queued = m_queue.size();
    }
    m_wake.notify_all();
    return { id, Refusal::None, {} };
}

void RequestScheduler::cancel(std::uint64_t id)
{
    {
        std::lock_guard lock(m_mutex);
        m_cancelled.push_back(id);
    }
    m_wake.notify_all();
}

SchedulerStats RequestScheduler::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void RequestScheduler::run()
{
    while (true) {
        std::vector<std::unique_ptr<Slot>> fresh;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stopping || !m_queue.empty() || !m_active.empty(); });
            if (m_stopping)
                break;
            while (m_active.size() + fresh.size() < m_options.maxActive && !m_queue.empty()) {
                fresh.push_back(std::move(m_queue.front()));
                m_queue.pop_front();
            }
            m_stats.queued = m_queue.size();
        }
        admit(fresh);
        step();
    }
    // Shutting down: everyone still waiting or running hears that it was cancelled.
    std::deque<std::unique_ptr<Slot>> queued;
    {
        std::lock_guard lock(m_mutex);
        queued.swap(m_queue);
    }
    for (auto& slot : queued)
        m_active.push_back(std::move(slot));
    for (auto& slot : m_active) {
        if (slot->done)
            continue;
        slot->result.cancelled = true;
        finish(*slot, slot->result);
    }
    m_active.clear();
    m_roots.clear();
}

void RequestScheduler::admit(std::vector<std::unique_ptr<Slot>>& fresh)
{
    for (auto& slot : fresh) {
        slot->sequence = sequenceFor(*slot, fresh);
        slot->admitted = Clock::now();
        if (slot->request.prompt.size() >= m_options.minSharedPrefix) {
            m_recentPrompts.push_back(slot->request.prompt);
            if (m_recentPrompts.size() > kRecentPrompts)
                m_recentPrompts.pop_front();
        }
    }
    for (auto& slot : fresh)
        m_active.push_back(std::move(slot));
    fresh.clear();
}

// A fresh sequence, or a fork of the longest cached prefix of the slot's prompt. When the
// prompt shares a long prefix with a recent or simultaneous prompt that no root covers yet,
// that prefix is prefilled once into a new root first: the first question of a contract pays
// for its passages twice, every later one not at all.
std::unique_ptr<Sequence> RequestScheduler::sequenceFor(
    Slot& slot, std::vector<std::unique_ptr<Slot>>& fresh)
{
    const auto& prompt = slot.request.prompt;
    const std::size_t limit = prompt.size() - 1; // its last token must be fed for logits
    auto bestRoot = m_roots.end();
    for (auto it = m_roots.begin(); it != m_roots.end(); ++it) {
        const auto& tokens = (*it)->tokens;
        if (tokens.size() <= limit && std::equal(tokens.begin(), tokens.end(), prompt.begin())
            && (bestRoot == m_roots.end() || tokens.size() > (*bestRoot)->tokens.size()))
            bestRoot = it;
    }
    const std::size_t cached = bestRoot == m_roots.end() ? 0 : (*bestRoot)->tokens.size();
    std::size_t shared = 0;
    for (const auto& recent : m_recentPrompts)
        shared = std::max(shared, commonPrefix(prompt, recent));
    for (const auto& other : fresh)
        if (other.get() != &slot)
            shared = std::max(shared, commonPrefix(prompt, other->request.prompt));
    shared = std::min(shared, limit);

    if (m_options.prefixCacheEntries > 0 && shared >= m_options.minSharedPrefix
        && shared >= cached + m_options.minSharedPrefix) {
        auto root = std::make_unique<PrefixRoot>();
        root->tokens.assign(prompt.begin(), prompt.begin() + std::ptrdiff_t(shared));
        root->sequence = cached > 0 ? m_model.fork(*(*bestRoot)->sequence) : m_model.newSequence();
        bool ok = true;
        for (std::size_t at = cached; at < shared && ok; at += kPromptTokensPerStep) {
            const std::size_t n = std::min(kPromptTokensPerStep, shared - at);
            const ForwardRequest request { root->sequence.get(),
                std::span<const std::int32_t>(root->tokens).subspan(at, n), false };
            ok = m_model.step(std::span<const ForwardRequest>(&request, 1)).ok();
        }
        if (ok) {
            {
                std::lock_guard lock(m_mutex);
                m_stats.promptTokens += std::int64_t(shared - cached);
            }
            if (m_roots.size() >= m_options.prefixCacheEntries)
                m_roots.erase(m_roots.begin()); // least recently used
            m_roots.push_back(std::move(root));
            bestRoot = m_roots.end() - 1;
        }
        // A root that failed (the KV pool is full) is dropped: the prompt is fed alone.
    }
    if (bestRoot == m_roots.end()) {
        slot.fed = 0;
        return m_model.newSequence();
    }
    std::rotate(bestRoot, bestRoot + 1, m_roots.end()); // most recently used last
    PrefixRoot& root = *m_roots.back();
    slot.fed = root.tokens.size();
    {
        std::lock_guard lock(m_mutex);
        m_stats.reusedPromptTokens += std::int64_t(slot.fed);
    }
    return m_model.fork(*root.sequence);
}

void RequestScheduler::step()
{
    {
        std::lock_guard lock(m_mutex);
        for (std::uint64_t id : m_cancelled)
            for (auto& slot : m_active)
                if (slot->id == id)
                    slot->cancelRequested = true;
        // Cancelled while still queued: those stay queued until admitted, then end at once.
        std::erase_if(m_cancelled, [&](std::uint64_t id) {
            return std::none_of(m_queue.begin(), m_queue.end(),
                [id](const std::unique_ptr<Slot>& s) { return s->id == id; });
        });
    }
    for (auto& slot : m_active) {
        if (slot->cancelRequested && !slot->done) {
            slot->result.cancelled = true;
            finish(*slot, slot->result);
        }
    }
    std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });

    std::vector<ForwardRequest> forward;
    std::vector<Slot*> stepped;
    std::size_t promptBudget = kPromptTokensPerStep;
    for (auto& slot : m_active) {
        if (slot->pending) {
            forward.push_back(
                { slot->sequence.get(), std::span<const std::int32_t>(&*slot->pending, 1), false });
            stepped.push_back(slot.get());
            continue;
        }
        const std::size_t remaining = slot->request.prompt.size() - slot->fed;
        const std::size_t n = std::min(remaining, promptBudget);
        if (n == 0)
            continue;
        promptBudget -= n;
        forward.push_back({ slot->sequence.get(),
            std::span<const std::int32_t>(slot->request.prompt).subspan(slot->fed, n), false });
        stepped.push_back(slot.get());
    }
    if (forward.empty()) {
        std::lock_guard lock(m_mutex);
        m_stats.active = m_active.size();
        return;
    }
    auto logits = m_model.step(forward);
    if (!logits) {
        // The sequences of a failed step are in an undefined state: each of its requests ends
        // with the engine's message; the others go on.
        for (Slot* slot : stepped)
            finish(*slot, Error { "the engine failed: " + logits.error().message });
        // A full KV pool is the usual cause: the cached prefixes give their blocks back so
        // the next requests have room (they are rebuilt when prompts share them again).
        m_roots.clear();
        std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });
        return;
    }
    std::int64_t promptFed = 0, generated = 0;
    const std::size_t vocab = std::size_t(m_model.vocabSize());
    for (std::size_t row = 0; row < stepped.size(); ++row) {
        Slot& slot = *stepped[row];
        if (slot.pending) {
            slot.pending.reset();
        } else {
            const std::size_t n = forward[row].tokens.size();
            slot.fed += n;
            promptFed += std::int64_t(n);
            if (slot.fed < slot.request.prompt.size())
                continue;
        }
        std::string error;
        const bool going
            = advance(slot, std::span<const float>(*logits).subspan(row * vocab, vocab), error);
        ++generated;
        if (!error.empty())
            finish(slot, Error { error });
        else if (!going)
            finish(slot, slot.result);
    }
    std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });
    std::lock_guard lock(m_mutex);
    m_stats.promptTokens += promptFed;
    m_stats.generatedTokens += generated;
    ++m_stats.steps;
    m_stats.active = m_active.size();
    m_stats.cachedPrefixes = m_roots.size();
    m_stats.kvBlocksInUse = m_model.kvBlocksInUse();
}

// Draws a slot's next token; false when the slot has ended (error set when it failed).
bool RequestScheduler::advance(Slot& slot, std::span<const float> logits, std::string& error)
{
    GenerationResult& result = slot.result;
    auto* constraint = slot.request.constraint.get();
    auto token = slot.sampler.sample(logits, slot.request.prompt, result.ids, constraint);
    if (!token) {
        error = token.error().message;
        return false;
    }
    if (constraint) {
        if (auto accepted = constraint->accept(*token); !accepted) {
            error = accepted.error().message;
            return false;
        }
    }
    if (!slot.firstToken)
        slot.firstToken = Clock::now();
    result.ids.push_back(*token);
    const std::string piece = slot.detokenizer.push(*token);
    const auto reason = slot.stop.add(*token, piece);
    const std::string releasable = slot.stop.takeReleasable();
    if (!releasable.empty() && slot.request.onText && !slot.request.onText(releasable)) {
        result.cancelled = true;
        return false;
    }
    if (reason != sampling::StopReason::None) {
        result.reason = reason;
        return false;
    }
    const std::int64_t context = m_model.contextLength();
    if (context > 0 && slot.sequence->length() + 1 > context)
        return false; // the context is full: reason None
    slot.pending = *token;
    return true;
}

void RequestScheduler::finish(Slot& slot, Result<GenerationResult> outcome)
{
    {
        std::lock_guard lock(m_mutex);
        --m_inFlight;
    }
    slot.done = true;
    slot.sequence.reset(); // its KV blocks and state slot go back for the next request
    if (!outcome) {
        if (slot.request.onFinished)
            slot.request.onFinished(std::move(outcome));
        return;
    }
    GenerationResult& result = slot.result;
    if (result.reason == sampling::StopReason::None && !result.cancelled) {
        const std::string tail = slot.detokenizer.flush();
        if (!tail.empty())
            slot.stop.add(-1, tail);
        const std::string rest = slot.stop.takeReleasable();
        if (!rest.empty() && slot.request.onText)
            slot.request.onText(rest);
    }
    result.text = slot.stop.text();
    result.promptTokens = std::int64_t(slot.request.prompt.size());
    if (slot.firstToken) {
        result.prefillSeconds
            = std::chrono::duration<double>(*slot.firstToken - slot.admitted).count();
        result.decodeSeconds
            = std::chrono::duration<double>(Clock::now() - *slot.firstToken).count();
    }
    if (slot.request.onFinished)
        slot.request.onFinished(result);
}

} // namespace cw::engine
