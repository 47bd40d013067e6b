#pragma once

#include "engine/common/result.h"
#include "kernels/token_draw.h"

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace cw::sampling {

class GrammarConstraint;

// How the next token is chosen from the logits. The defaults change nothing: temperature 1,
// no truncation, no penalties.
struct SamplingParams {
    float temperature = 1.0f; // 0 (or below 1e-6) means greedy (argmax)
    int32_t topK = 0; // 0 = off
    float topP = 1.0f; // 1 = off
    float minP = 0.0f; // 0 = off; keep tokens with p >= minP * p_max
    // Hugging Face semantics: over every distinct token seen in the prompt and the output,
    // a positive logit is divided by the penalty, a negative one multiplied. 1 = off.
    float repetitionPenalty = 1.0f;
    // OpenAI semantics, over the generated tokens only:
    // logit -= presencePenalty * (count > 0) + frequencyPenalty * count.
    float presencePenalty = 0.0f;
    float frequencyPenalty = 0.0f;
    uint64_t seed = 0;
    std::unordered_map<int32_t, float> logitBias; // token id -> added to its logit
    int32_t maxTokens = 0; // 0 = no limit (the context still bounds generation)
    std::vector<int32_t> stopTokenIds; // besides the model's EOS ids
    std::vector<std::string> stopStrings;

    // Refuses out-of-range values and token ids outside [0, vocabSize).
    Result<void> validate(int32_t vocabSize) const;
};

// A small PRNG that gives the same stream on every machine and standard library
// (xoshiro256** seeded through splitmix64).
class Rng {
public:
    explicit Rng(uint64_t seed = 0);
    uint64_t next();
    // Uniform in [0, 1) from the top 53 bits of next().
    double uniform();

private:
    uint64_t m_s[4];
};

// One surviving candidate of the processor chain, with its probability after the chain.
struct Candidate {
    int32_t id;
    float logit;
    float p;
};

// The processors, exposed one by one so that each can be tested. They act in place.
void applyRepetitionPenalty(std::span<float> logits, float penalty,
    std::span<const int32_t> promptTokens, std::span<const int32_t> generatedTokens);
void applyPresenceFrequencyPenalty(std::span<float> logits, float presence, float frequency,
    std::span<const int32_t> generatedTokens);
void applyLogitBias(std::span<float> logits, const std::unordered_map<int32_t, float>& bias);
// Keeps the finite logits, divides them by the temperature and applies top-k, top-p and min-p
// in that order; the survivors carry renormalised probabilities. They come sorted (best
// first, then lower id) when top-k or top-p is on, else the best first and the rest in id
// order.
std::vector<Candidate> truncatedDistribution(
    std::span<const float> logits, const SamplingParams& params);

// Chooses the next token. Order of processors as in Hugging Face / llama.cpp: repetition,
// presence and frequency penalties, logit bias, (grammar mask), temperature, top-k, top-p,
// min-p, then a draw from the seeded Rng. Greedy when temperature is 0.
//
// With a grammar constraint the sampler first draws from the unconstrained chain and keeps
// the token if the grammar accepts it (cheap: one token checked); only when it is rejected
// does it compute the full token mask, set disallowed logits to -inf and draw again, as
// llama.cpp does. Tokens outside the grammar are never returned.
class Sampler {
public:
    explicit Sampler(SamplingParams params);

    const SamplingParams& params() const { return m_params; }

    // logits: vocabSize floats (not modified). Returns the next token id, or an error when
    // nothing can be sampled (every logit -inf or NaN, or the grammar allows no token).
    Result<int32_t> sample(std::span<const float> logits, std::span<const int32_t> promptTokens,
        std::span<const int32_t> generatedTokens, GrammarConstraint* constraint = nullptr);

    // Restarts the random stream from the seed (same params, same sequence of draws).
    void reset();

    // The next token as a draw for the backend to make where the logits are
    // (kernels/token_draw.h): these params' temperature and cuts, and the next uniform of the
    // seeded stream. For params without penalties or biases; a grammar is the caller's.
    kernels::TokenDraw nextDraw();

private:
    Result<int32_t> drawFrom(std::span<const float> logits);

    SamplingParams m_params;
    Rng m_rng;
    std::vector<float> m_work;
    std::vector<float> m_masked;
    std::vector<Candidate> m_candidates; // the chain's buffers, kept between tokens
    std::vector<double> m_probabilities;
};

} // namespace cw::sampling
