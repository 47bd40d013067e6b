#include "engine/sampling/sampler.h"

#include "engine/sampling/grammar_constraint.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

namespace cw::sampling {

namespace {

uint64_t splitMix64(uint64_t& state)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

bool greedy(float temperature)
{
    return temperature < 1e-6f;
}

// Candidates in a total order: higher logit first, then lower id (so that ties sort the
// same with every standard library).
bool before(const Candidate& a, const Candidate& b)
{
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

} // namespace

Result<void> SamplingParams::validate(int32_t vocabSize) const
{
    auto bad = [](const std::string& what) { return makeError("sampling parameters: " + what); };
    if (!std::isfinite(temperature) || temperature < 0.0f)
        return bad("temperature must be a finite number >= 0, got " + std::to_string(temperature));
    if (topK < 0)
        return bad("top-k must be >= 0, got " + std::to_string(topK));
    if (!(topP > 0.0f && topP <= 1.0f))
        return bad("top-p must be in (0, 1], got " + std::to_string(topP));
    if (!(minP >= 0.0f && minP <= 1.0f))
        return bad("min-p must be in [0, 1], got " + std::to_string(minP));
    if (!(repetitionPenalty > 0.0f) || !std::isfinite(repetitionPenalty))
        return bad("repetition penalty must be > 0, got " + std::to_string(repetitionPenalty));
    if (!std::isfinite(presencePenalty) || !std::isfinite(frequencyPenalty))
        return bad("presence and frequency penalties must be finite");
    if (maxTokens < 0)
        return bad("max tokens must be >= 0, got " + std::to_string(maxTokens));
    for (const auto& [id, bias] : logitBias) {
        if (id < 0 || id >= vocabSize)
            return bad("logit bias names token " + std::to_string(id)
                + " outside the vocabulary of " + std::to_string(vocabSize));
        if (std::isnan(bias))
            return bad("logit bias for token " + std::to_string(id) + " is NaN");
    }
    for (int32_t id : stopTokenIds)
        if (id < 0 || id >= vocabSize)
            return bad("stop token " + std::to_string(id) + " is outside the vocabulary of "
                + std::to_string(vocabSize));
    for (const std::string& s : stopStrings)
        if (s.empty())
            return bad("a stop string is empty");
    return {};
}

Rng::Rng(uint64_t seed)
{
    uint64_t state = seed;
    for (uint64_t& s : m_s)
        s = splitMix64(state);
}

uint64_t Rng::next()
{
    const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

double Rng::uniform()
{
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

void applyRepetitionPenalty(std::span<float> logits, float penalty,
    std::span<const int32_t> promptTokens, std::span<const int32_t> generatedTokens)
{
    if (penalty == 1.0f)
        return;
    std::vector<int32_t> seen(promptTokens.begin(), promptTokens.end());
    seen.insert(seen.end(), generatedTokens.begin(), generatedTokens.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (int32_t id : seen) {
        if (id < 0 || static_cast<size_t>(id) >= logits.size())
            continue;
        float& l = logits[static_cast<size_t>(id)];
        l = l > 0.0f ? l / penalty : l * penalty;
    }
}

void applyPresenceFrequencyPenalty(std::span<float> logits, float presence, float frequency,
    std::span<const int32_t> generatedTokens)
{
    if (presence == 0.0f && frequency == 0.0f)
        return;
    std::vector<int32_t> ids(generatedTokens.begin(), generatedTokens.end());
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j < ids.size() && ids[j] == ids[i])
            ++j;
        const int32_t id = ids[i];
        if (id >= 0 && static_cast<size_t>(id) < logits.size())
            logits[static_cast<size_t>(id)] -= presence + frequency * static_cast<float>(j - i);
        i = j;
    }
}

void applyLogitBias(std::span<float> logits, const std::unordered_map<int32_t, float>& bias)
{
    for (const auto& [id, b] : bias)
        if (id >= 0 && static_cast<size_t>(id) < logits.size())
            logits[static_cast<size_t>(id)] += b;
}

namespace {

// The processor chain after the penalties, into reusable buffers: a sampled step of a
// 248,320-token vocabulary touches every logit, so it must not allocate or sort them all.
// Candidates come out in a deterministic order: sorted (best first, then lower id) where
// top-k or top-p needs an order, else the best first and the rest in id order.
void distributionInto(std::span<const float> logits, const SamplingParams& params,
    std::vector<Candidate>& c, std::vector<double>& p)
{
    c.clear();
    // NaN and -inf are never candidates; +inf counts as the largest float. One pass for the
    // best (lowest id among equals): NaN compares false, so the plain loop skips it.
    constexpr float kInf = std::numeric_limits<float>::infinity();
    auto value = [](float l) { return l == kInf ? FLT_MAX : l; };
    auto usable = [](float l) { return l > -kInf; };
    std::int64_t best = -1;
    float bestSeen = -kInf;
    for (std::size_t i = 0; i < logits.size(); ++i)
        if (logits[i] > bestSeen) {
            bestSeen = logits[i];
            best = std::int64_t(i);
        }
    if (best < 0)
        return;
    if (bestSeen == kInf || bestSeen == FLT_MAX) // +inf ties with FLT_MAX: the lowest id of them
        best = std::find_if(logits.begin(), logits.end(), [&](float l) {
            return value(l) == FLT_MAX;
        }) - logits.begin();
    const float bestLogit = value(logits[std::size_t(best)]);
    if (greedy(params.temperature)) {
        c.push_back({ int32_t(best), bestLogit, 1.0f });
        return;
    }
    c.push_back({ int32_t(best), bestLogit, 0.0f });
    for (std::size_t i = 0; i < logits.size(); ++i)
        if (std::int64_t(i) != best && usable(logits[i]))
            c.push_back({ int32_t(i), value(logits[i]), 0.0f });
    if (params.topK > 0 && static_cast<size_t>(params.topK) < c.size()) {
        std::nth_element(c.begin(), c.begin() + params.topK, c.end(), before);
        c.resize(static_cast<size_t>(params.topK));
    }
    if (params.topK > 0)
        std::sort(c.begin(), c.end(), before);
    const double invT = 1.0 / static_cast<double>(params.temperature);
    const double top = static_cast<double>(bestLogit) * invT;
    auto weight
        = [&](const Candidate& x) { return std::exp(static_cast<double>(x.logit) * invT - top); };
    p.resize(c.size());
    double sum = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
        p[i] = weight(c[i]);
        sum += p[i];
    }
    size_t keep = c.size();
    if (params.topP < 1.0f) {
        // The smallest sorted prefix reaching topP: sort a prefix that grows until it does
        // (a few dozen candidates for a trained model), not the whole vocabulary. The sorted
        // prefix is the same as a full sort's (`before` is a total order); after top-k the
        // candidates are sorted already and the partial sorts change nothing. p follows the
        // candidates it was computed for only until they move, so the prefix's are recomputed.
        size_t sorted = 0;
        size_t want = std::min<size_t>(64, c.size());
        double cum = 0.0;
        keep = 0;
        while (keep == 0) {
            std::partial_sort(c.begin() + std::ptrdiff_t(sorted), c.begin() + std::ptrdiff_t(want),
                c.end(), before);
            for (size_t i = sorted; i < want && keep == 0; ++i) {
                cum += weight(c[i]) / sum;
                if (cum >= static_cast<double>(params.topP) || i + 1 == c.size())
                    keep = i + 1;
            }
            sorted = want;
            want = std::min(c.size(), want * 8);
        }
        for (size_t i = 0; i < keep; ++i)
            p[i] = weight(c[i]);
    }
    c.resize(keep);
    p.resize(keep);
    if (params.minP > 0.0f) {
        // p[0] is the most likely token; survivors keep their relative order.
        const double threshold = static_cast<double>(params.minP) * p[0];
        size_t k = 0;
        for (size_t i = 0; i < keep; ++i) {
            if (p[i] >= threshold) {
                c[k] = c[i];
                p[k++] = p[i];
            }
        }
        keep = k;
        c.resize(keep);
    }
    double kept = 0.0;
    for (size_t i = 0; i < keep; ++i)
        kept += p[i];
    for (size_t i = 0; i < keep; ++i)
        c[i].p = static_cast<float>(p[i] / kept);
}

// The `count` best usable logits (NaN and -inf never count; +inf as the largest float), best
// first, then lower id: the order in which a greedy masked draw would prefer them. One pass
// with a small heap: a 248,320-logit row costs a compare a logit.
void bestCandidates(std::span<const float> logits, std::size_t count, std::vector<Candidate>& c)
{
    constexpr float kInf = std::numeric_limits<float>::infinity();
    c.clear();
    // A heap by `before`: its front is the worst of the best kept so far.
    for (std::size_t i = 0; i < logits.size(); ++i) {
        const float l = logits[i];
        if (!(l > -kInf))
            continue;
        const Candidate x { int32_t(i), l == kInf ? FLT_MAX : l, 0.0f };
        if (c.size() < count) {
            c.push_back(x);
            std::push_heap(c.begin(), c.end(), before);
        } else if (before(x, c.front())) {
            std::pop_heap(c.begin(), c.end(), before);
            c.back() = x;
            std::push_heap(c.begin(), c.end(), before);
        }
    }
    std::sort_heap(c.begin(), c.end(), before);
}

// Candidates a greedy grammar-masked step checks one by one before it computes the whole
// mask. Inside a JSON string nearly every token is allowed and the mask walks the whole
// vocabulary trie (16.8 ms a token, bench_grammar_mask's "free text" row), so the best
// allowed one is found in the first few; where the grammar allows a handful, none of these is
// and the mask, small there, is cheap (5-30 us).
constexpr std::size_t kGreedyCandidatesChecked = 64;

} // namespace

std::vector<Candidate> truncatedDistribution(
    std::span<const float> logits, const SamplingParams& params)
{
    std::vector<Candidate> c;
    std::vector<double> p;
    distributionInto(logits, params, c, p);
    return c;
}

Sampler::Sampler(SamplingParams params)
    : m_params(std::move(params))
    , m_rng(m_params.seed)
{
}

void Sampler::reset()
{
    m_rng = Rng(m_params.seed);
}

kernels::TokenDraw Sampler::nextDraw()
{
    // A float of [0, 1): the double's rounding may reach 1.
    const float u = std::min(float(m_rng.uniform()), std::nextafter(1.0f, 0.0f));
    return { m_params.temperature, m_params.topK, m_params.topP, m_params.minP, u };
}

Result<int32_t> Sampler::drawFrom(std::span<const float> logits)
{
    std::vector<Candidate>& c = m_candidates;
    distributionInto(logits, m_params, c, m_probabilities);
    if (c.empty())
        return makeError("sampler: no token can be sampled (every logit is -inf or NaN)");
    if (c.size() == 1)
        return c.front().id;
    // Cumulative walk in double over the (deterministically ordered) candidates.
    const double u = m_rng.uniform();
    double cum = 0.0;
    for (const Candidate& x : c) {
        cum += static_cast<double>(x.p);
        if (u < cum)
            return x.id;
    }
    return c.back().id;
}

Result<int32_t> Sampler::sample(std::span<const float> logits,
    std::span<const int32_t> promptTokens, std::span<const int32_t> generatedTokens,
    GrammarConstraint* constraint)
{
    // The logits are copied only when a processor changes them (a megabyte a token at 248,320).
    std::span<const float> adjusted = logits;
    if (m_params.repetitionPenalty != 1.0f || m_params.presencePenalty != 0.0f
        || m_params.frequencyPenalty != 0.0f || !m_params.logitBias.empty()) {
        m_work.assign(logits.begin(), logits.end());
        applyRepetitionPenalty(m_work, m_params.repetitionPenalty, promptTokens, generatedTokens);
        applyPresenceFrequencyPenalty(
            m_work, m_params.presencePenalty, m_params.frequencyPenalty, generatedTokens);
        applyLogitBias(m_work, m_params.logitBias);
        adjusted = m_work;
    }
    if (!constraint)
        return drawFrom(adjusted);
    if (constraint->isFinished())
        return makeError("sampler: the grammar already ended (EOS was accepted)");
    Result<int32_t> first = drawFrom(adjusted);
    // allows() refuses ids past the vocabulary (a model's padding).
    if (first && constraint->allows(*first))
        return first;
    if (greedy(m_params.temperature) && first) {
        // The masked argmax is the first allowed token in the order best first, lower id
        // first among equals: the same token as masking the row and drawing again.
        bestCandidates(adjusted, kGreedyCandidatesChecked, m_candidates);
        for (const Candidate& x : m_candidates)
            if (constraint->allows(x.id))
                return x.id;
    }
    m_masked.assign(adjusted.begin(), adjusted.end());
    constraint->applyMask(m_masked);
    Result<int32_t> second = drawFrom(m_masked);
    if (!second)
        return makeError("sampler: the grammar allows no token with a finite logit here");
    return second;
}

} // namespace cw::sampling
