#include "engine/generation/request_scheduler.h"

#include "engine/generation/answer_progress.h"
#include "engine/generation/end_of_turn.h"
#include "engine/tokenizer/tokenizer.h"

#include <algorithm>
#include <optional>

namespace cw::engine {

namespace {

// Prompts remembered to find shared prefixes in (tokens only: a few KB each).
constexpr std::size_t kRecentPrompts = 16;

std::size_t commonPrefix(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b)
{
    const std::size_t n = std::min(a.size(), b.size());
    return std::size_t(
        std::mismatch(a.begin(), a.begin() + std::ptrdiff_t(n), b.begin()).first - a.begin());
}

template <typename Duration> double seconds(Duration d)
{
    return std::chrono::duration<double>(d).count();
}

} // namespace

struct RequestScheduler::Slot {
    Slot(std::uint64_t i, ScheduledRequest r, const Tokenizer& tokenizer,
        std::vector<std::int32_t> eos, std::int64_t context)
        : id(i)
        , request(std::move(r))
        , answer(request.params, request.constraint.get(), request.onText, tokenizer,
              std::move(eos), context)
    {
    }

    std::uint64_t id;
    ScheduledRequest request;
    AnswerProgress answer;
    std::vector<std::uint64_t> hashes; // of the prompt's whole KV blocks
    std::unique_ptr<Sequence> sequence;
    std::size_t fed = 0; // prompt tokens in the sequence (a cached prefix included)
    std::optional<std::int32_t> pending; // chosen, to be fed next step
    Clock::time_point submitted;
    Clock::time_point admitted;
    std::optional<Clock::time_point> firstToken;
    // A leader prefills a prefix other prompts share and leaves its sequence, forked at
    // cacheAt tokens (whole blocks), in the prefix cache under cacheKey. 0: none.
    std::size_t cacheAt = 0;
    std::uint64_t cacheKey = 0;
    // A follower waits for a leader's prefix instead of prefilling it a second time.
    std::uint64_t waitKey = 0;
    bool placed = false; // has its sequence and is stepped
    bool done = false;
};

RequestScheduler::RequestScheduler(
    Model& model, const Tokenizer& tokenizer, SchedulerOptions options)
    : m_model(model)
    , m_tokenizer(tokenizer)
    , m_options(options)
    , m_eos(endOfTurnIds(tokenizer, model))
    , m_backendDraws(options.backendDraws.value_or(model.onGpu()))
    , m_cache(model.kvBlockTokens(), options.prefixCacheEntries)
{
    if (m_options.maxActive == 0)
        m_options.maxActive = 1;
    // The step budget never exceeds the prefill chunk (a GPU's step workspace is sized for
    // it) and always leaves a prompt room beside every running decode.
    const std::size_t chunk = std::size_t(std::max<std::int64_t>(model.prefillChunk(), 1));
    m_stepTokens = m_options.stepTokens > 0 ? std::min(m_options.stepTokens, chunk) : chunk;
    m_stepTokens = std::max(m_stepTokens, m_options.maxActive + 1);
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

RequestScheduler::Submitted RequestScheduler::submit(ScheduledRequest&& request)
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
    auto hashes = m_cache.blockHashes(request.prompt); // off the scheduler's thread
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
        auto slot = std::make_unique<Slot>(id, std::move(request), m_tokenizer, m_eos, context);
        slot->hashes = std::move(hashes);
        slot->submitted = Clock::now();
        m_queue.push_back(std::move(slot));
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
            m_wake.wait(lock, [&] {
                return m_stopping || !m_queue.empty() || !m_active.empty() || !m_cancelled.empty();
            });
            if (m_stopping)
                break;
        }
        takeCancels();
        {
            std::lock_guard lock(m_mutex);
            while (m_active.size() + fresh.size() < m_options.maxActive && !m_queue.empty()) {
                fresh.push_back(std::move(m_queue.front()));
                m_queue.pop_front();
            }
            m_stats.queued = m_queue.size();
        }
        // Every newcomer is visible before any is placed, so requests that arrive together
        // find their shared prefix in each other and one of them prefills it for all.
        const std::size_t first = m_active.size();
        for (auto& slot : fresh) {
            slot->admitted = Clock::now();
            m_active.push_back(std::move(slot));
        }
        for (std::size_t i = first; i < m_active.size(); ++i)
            place(*m_active[i]);
        resumeWaiting();
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
    for (auto& slot : m_active)
        end(*slot, true);
    m_active.clear();
    m_cache.clear();
}

void RequestScheduler::takeCancels()
{
    std::vector<std::uint64_t> ids;
    std::vector<std::unique_ptr<Slot>> dropped;
    {
        std::lock_guard lock(m_mutex);
        ids.swap(m_cancelled);
        for (std::uint64_t id : ids) {
            auto it = std::find_if(m_queue.begin(), m_queue.end(),
                [id](const std::unique_ptr<Slot>& s) { return s->id == id; });
            if (it != m_queue.end()) {
                dropped.push_back(std::move(*it));
                m_queue.erase(it);
            }
        }
        m_stats.queued = m_queue.size();
    }
    for (auto& slot : dropped)
        end(*slot, true);
    for (std::uint64_t id : ids)
        for (auto& slot : m_active)
            if (slot->id == id)
                end(*slot, true);
    std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });
}

// Where a newcomer starts: a fork of the longest cached prefix of its prompt, or a fresh
// sequence. When its prompt shares whole blocks with a recent or running prompt that the cache
// does not hold yet, it either waits for the request already prefilling them (a follower) or
// prefills them itself and leaves them in the cache (a leader): the first question of a
// contract pays for its passages once more, every later one not at all. A leader's prefix is
// fed through the same step budget as any prompt, between the running decodes.
void RequestScheduler::place(Slot& slot)
{
    const auto& prompt = slot.request.prompt;
    const std::size_t limit = prompt.size() - 1; // its last token must be fed for logits
    const std::size_t bt = std::size_t(m_cache.blockTokens());
    const auto hit = m_cache.longest(prompt, slot.hashes, limit);
    if (m_options.prefixCacheEntries > 0) {
        for (const auto& other : m_active) {
            if (other.get() == &slot || other->done || other->cacheAt == 0)
                continue;
            const std::size_t blocks = other->cacheAt / bt;
            if (other->cacheAt <= limit && blocks <= slot.hashes.size()
                && slot.hashes[blocks - 1] == other->cacheKey
                && other->cacheAt >= hit.tokens + m_options.minSharedPrefix) {
                slot.waitKey = other->cacheKey;
                return;
            }
        }
        std::size_t shared = 0;
        for (const auto& recent : m_recentPrompts)
            shared = std::max(shared, commonPrefix(prompt, recent));
        for (const auto& other : m_active)
            if (other.get() != &slot && !other->done)
                shared = std::max(shared, commonPrefix(prompt, other->request.prompt));
        shared = std::min(shared, limit);
        shared -= shared % bt;
        if (shared >= m_options.minSharedPrefix && shared >= hit.tokens + m_options.minSharedPrefix
            && shared / bt <= slot.hashes.size()) {
            slot.cacheAt = shared;
            slot.cacheKey = slot.hashes[shared / bt - 1];
        }
    }
    if (prompt.size() >= m_options.minSharedPrefix) {
        m_recentPrompts.push_back(prompt);
        if (m_recentPrompts.size() > kRecentPrompts)
            m_recentPrompts.pop_front();
    }
    slot.sequence = sequenceFrom(hit.sequence);
    if (!slot.sequence->stateError().empty()) {
        // Without a state slot its step would fail every request in the batch: it fails alone.
        fail(slot,
            "no room for another sequence on " + m_model.deviceName() + ": "
                + slot.sequence->stateError());
        return;
    }
    slot.fed = hit.tokens;
    slot.placed = true;
    slot.answer.result().reusedPromptTokens = std::int64_t(hit.tokens);
    std::lock_guard lock(m_mutex);
    m_stats.reusedPromptTokens += std::int64_t(hit.tokens);
}

// A fork of `parent` (null: a new sequence); when no recurrent-state slot is free, cached
// prefixes give theirs back, least recently used first, `parent` last of all.
std::unique_ptr<Sequence> RequestScheduler::sequenceFrom(const Sequence* parent)
{
    while (true) {
        auto sequence = parent ? m_model.fork(*parent) : m_model.newSequence();
        if (sequence->stateError().empty() || !m_cache.evictOne(parent))
            return sequence;
    }
}

bool RequestScheduler::leaderLives(std::uint64_t key) const
{
    return std::any_of(m_active.begin(), m_active.end(), [key](const std::unique_ptr<Slot>& s) {
        return !s->done && s->cacheAt > 0 && s->cacheKey == key;
    });
}

// Followers whose prefix is now cached fork it; those whose leader ended before it got
// there (cancelled, failed) find their own way.
void RequestScheduler::resumeWaiting()
{
    for (std::size_t i = 0; i < m_active.size(); ++i) {
        Slot& slot = *m_active[i];
        if (slot.done || slot.placed || slot.waitKey == 0)
            continue;
        if (m_cache.contains(slot.waitKey) || !leaderLives(slot.waitKey)) {
            slot.waitKey = 0;
            place(slot);
        }
    }
    std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });
}

void RequestScheduler::step()
{
    std::vector<ForwardRequest> forward;
    std::vector<Slot*> stepped;
    std::vector<bool> checked; // per row: a greedy grammar-masked choice (chooseOnHost)
    std::size_t decodes = 0;
    for (const auto& slot : m_active)
        decodes += slot->placed && slot->pending ? 1 : 0;
    // Decode tokens first (one each), then prompt chunks in the order requests joined, until
    // the step's token budget is spent.
    std::size_t budget = m_stepTokens > decodes ? m_stepTokens - decodes : 0;
    for (const auto& slot : m_active) {
        if (slot->done || !slot->placed)
            continue;
        if (slot->pending) {
            forward.push_back(
                rowFor(*slot, std::span<const std::int32_t>(&*slot->pending, 1), true));
            stepped.push_back(slot.get());
            checked.push_back(slot->answer.greedyChecked());
            continue;
        }
        const auto& prompt = slot->request.prompt;
        std::size_t n = std::min(prompt.size() - slot->fed, budget);
        if (slot->cacheAt > slot->fed)
            n = std::min(n, slot->cacheAt - slot->fed); // the leader stops where the cache starts
        if (n == 0)
            continue;
        budget -= n;
        const bool last = slot->fed + n == prompt.size();
        forward.push_back(
            rowFor(*slot, std::span<const std::int32_t>(prompt).subspan(slot->fed, n), last));
        stepped.push_back(slot.get());
        checked.push_back(last && slot->answer.greedyChecked());
    }
    // A step of more logit rows (one a request) than the backend keeps after it: the checked
    // rows' logits cross with the step instead.
    if (std::int64_t(forward.size()) > m_model.keptLogitRows())
        for (std::size_t row = 0; row < forward.size(); ++row)
            if (checked[row]) {
                checked[row] = false;
                forward[row].hostLogits = true;
            }
    if (forward.empty()) {
        std::unique_lock lock(m_mutex);
        m_stats.active = m_active.size();
        // Only followers whose leader is gone can be left here; they are placed next round.
        m_wake.wait_for(lock, std::chrono::milliseconds(1));
        return;
    }
    auto out = m_model.stepSampling(forward);
    if (!out) {
        // The sequences of a failed step are in an undefined state: each of its requests ends
        // with the engine's message; the others go on.
        for (Slot* slot : stepped)
            fail(*slot, "the engine failed: " + out.error().message);
        // A full KV pool is the usual cause: the cached prefixes give their blocks back so
        // the next requests have room (they are cached again when prompts share them).
        m_cache.clear();
        std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });
        publishStats(0, 0, 0);
        return;
    }
    const std::vector<Result<std::int32_t>> chosen = chooseOnHost(stepped, forward, checked, *out);
    std::int64_t promptFed = 0, generated = 0;
    for (std::size_t row = 0; row < stepped.size(); ++row) {
        const bool decode = stepped[row]->pending.has_value();
        const std::size_t n = forward[row].tokens.size();
        if (!decode)
            promptFed += std::int64_t(n);
        const Result<std::int32_t>* choice
            = forward[row].hostLogits || checked[row] ? &chosen[row] : nullptr;
        generated += afterStep(*stepped[row], decode ? 0 : n, choice, *out, row) ? 1 : 0;
    }
    std::erase_if(m_active, [](const std::unique_ptr<Slot>& s) { return s->done; });
    publishStats(promptFed, generated, stepped.size());
}

// A request's part of the step; `choosing`: its last row gives the next token, taken from
// the device's greedy pick, a draw made where the logits are, or the logits on the host.
ForwardRequest RequestScheduler::rowFor(
    Slot& slot, std::span<const std::int32_t> tokens, bool choosing)
{
    ForwardRequest f { slot.sequence.get(), tokens, false, false };
    if (!choosing)
        return f;
    if (m_backendDraws && slot.answer.drawable())
        f.draw = slot.answer.nextDraw();
    else
        f.hostLogits = slot.answer.needsLogits() && !slot.answer.greedyChecked();
    return f;
}

std::vector<Result<std::int32_t>> RequestScheduler::chooseOnHost(const std::vector<Slot*>& stepped,
    const std::vector<ForwardRequest>& forward, const std::vector<bool>& checked,
    const StepOutput& out)
{
    std::vector<Result<std::int32_t>> chosen(stepped.size(), std::int32_t(-1));
    const std::size_t vocab = std::size_t(m_model.vocabSize());
    // Per row to choose on the host: its logits, from the step (out.logits, in row order) or,
    // for a checked row whose device pick the grammar refused, fetched after it.
    std::vector<std::size_t> rows;
    std::vector<std::span<const float>> logits;
    std::vector<std::int64_t> refused;
    std::size_t crossed = 0;
    for (std::size_t row = 0; row < stepped.size(); ++row) {
        if (forward[row].hostLogits) {
            rows.push_back(row);
            logits.push_back(std::span<const float>(out.logits).subspan(vocab * crossed++, vocab));
        } else if (checked[row]) {
            const std::int32_t pick = out.greedy[row];
            if (stepped[row]->answer.allowsGreedy(pick))
                chosen[row] = pick;
            else
                refused.push_back(std::int64_t(row));
        }
    }
    Result<std::vector<float>> fetched = std::vector<float> {};
    if (!refused.empty()) {
        fetched = m_model.keptLogits(refused);
        for (std::size_t i = 0; i < refused.size(); ++i) {
            const std::size_t row = std::size_t(refused[i]);
            if (!fetched) {
                chosen[row] = fetched.error();
                continue;
            }
            rows.push_back(row);
            logits.push_back(std::span<const float>(*fetched).subspan(vocab * i, vocab));
        }
    }
    // A logits row exists only for a decode or the last chunk of a prompt, so each of these
    // rows asks for a token (a request cancelled by its progress callback wastes one).
    auto choose = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
            const std::size_t row = rows[std::size_t(i)];
            chosen[row]
                = stepped[row]->answer.choose(logits[std::size_t(i)], stepped[row]->request.prompt);
        }
    };
    if (rows.size() < 2) {
        choose(0, std::int64_t(rows.size()));
        return chosen;
    }
    // Eight threads at most: sampling 248,320 logits takes one to two milliseconds, and a
    // scheduler beside a CPU backend must not take every core from it between steps.
    if (!m_choosers)
        m_choosers = std::make_unique<kernels::ThreadPool>(
            int(std::min(8u, std::max(1u, std::thread::hardware_concurrency()))));
    m_choosers->parallelFor(std::int64_t(rows.size()), choose);
    return chosen;
}

// After a step: a prompt chunk moves the prompt on (and a leader leaves its prefix in the
// cache); a finished prompt or a decode row gives the next token. Returns whether a token was
// generated.
bool RequestScheduler::afterStep(Slot& slot, std::size_t promptFed,
    const Result<std::int32_t>* chosen, const StepOutput& out, std::size_t row)
{
    const auto& prompt = slot.request.prompt;
    if (slot.pending) {
        slot.pending.reset();
    } else {
        slot.fed += promptFed;
        if (slot.cacheAt > 0 && slot.fed == slot.cacheAt) {
            auto frozen = sequenceFrom(slot.sequence.get());
            if (frozen->stateError().empty())
                m_cache.insert(slot.cacheKey,
                    std::vector<std::int32_t>(
                        prompt.begin(), prompt.begin() + std::ptrdiff_t(slot.fed)),
                    std::move(frozen));
            slot.cacheAt = 0; // its followers find the entry (or, without one, their own way)
        }
        if (slot.request.onPromptProgress
            && !slot.request.onPromptProgress(slot.fed, prompt.size())) {
            end(slot, true);
            return false;
        }
        if (slot.fed < prompt.size())
            return false; // more of its prompt next step
    }
    std::int32_t token = out.greedy[row];
    if (chosen) {
        if (!*chosen) {
            fail(slot, chosen->error().message);
            return false;
        }
        token = **chosen;
    } else if (token < 0) {
        fail(slot, "sampler: no token can be sampled (every logit is -inf or NaN)");
        return false;
    }
    if (!slot.firstToken)
        slot.firstToken = Clock::now();
    auto going = slot.answer.add(token, slot.sequence->length());
    if (!going)
        fail(slot, going.error().message);
    else if (!*going)
        end(slot, false);
    else
        slot.pending = token;
    return true;
}

void RequestScheduler::end(Slot& slot, bool cancelled)
{
    if (slot.done)
        return;
    slot.done = true;
    slot.cacheAt = 0;
    slot.sequence.reset(); // its KV blocks and state slot go back for the next request
    {
        std::lock_guard lock(m_mutex);
        --m_inFlight;
    }
    slot.answer.finish(cancelled);
    GenerationResult& result = slot.answer.result();
    result.promptTokens = std::int64_t(slot.request.prompt.size());
    const auto now = Clock::now();
    const bool admitted = slot.admitted != Clock::time_point {};
    result.queuedSeconds = seconds((admitted ? slot.admitted : now) - slot.submitted);
    if (slot.firstToken) {
        result.prefillSeconds = seconds(*slot.firstToken - slot.admitted);
        result.decodeSeconds = seconds(now - *slot.firstToken);
    }
    if (slot.request.onFinished)
        slot.request.onFinished(result);
}

void RequestScheduler::fail(Slot& slot, std::string message)
{
    if (slot.done)
        return;
    slot.done = true;
    slot.cacheAt = 0;
    slot.sequence.reset();
    {
        std::lock_guard lock(m_mutex);
        --m_inFlight;
    }
    if (slot.request.onFinished)
        slot.request.onFinished(Error { std::move(message) });
}

void RequestScheduler::publishStats(
    std::int64_t promptFed, std::int64_t generated, std::size_t width)
{
    std::lock_guard lock(m_mutex);
    m_stats.promptTokens += promptFed;
    m_stats.generatedTokens += generated;
    if (width > 0)
        ++m_stats.steps;
    m_stats.mostRequestsInOneStep = std::max(m_stats.mostRequestsInOneStep, width);
    m_stats.active = m_active.size();
    m_stats.cachedPrefixes = m_cache.size();
    m_stats.kvBlocksInUse = m_model.kvBlocksInUse();
}

} // namespace cw::engine
