#include "engine/generation/answer_progress.h"

#include "engine/sampling/grammar_constraint.h"

namespace cw::engine {

namespace {

bool changesLogits(const sampling::SamplingParams& p)
{
    return p.repetitionPenalty != 1.0f || p.presencePenalty != 0.0f || p.frequencyPenalty != 0.0f
        || !p.logitBias.empty();
}

// Greedy with nothing that changes the logits first: the device's argmax (lowest id among
// equals, as the sampler's) is the token.
bool plainGreedy(const sampling::SamplingParams& p, const sampling::GrammarConstraint* constraint)
{
    return p.temperature < 1e-6f && !constraint && !changesLogits(p);
}

// Sampled with nothing that needs the host first: the draw can be made where the logits are.
bool plainDraw(const sampling::SamplingParams& p, const sampling::GrammarConstraint* constraint)
{
    return p.temperature >= 1e-6f && !constraint && !changesLogits(p);
}

// Greedy under a grammar, nothing else changing the logits: the sampler's first choice is
// the argmax, kept when the grammar allows it.
bool checkedGreedy(const sampling::SamplingParams& p, const sampling::GrammarConstraint* constraint)
{
    return p.temperature < 1e-6f && constraint && !changesLogits(p);
}

} // namespace

AnswerProgress::AnswerProgress(const sampling::SamplingParams& params,
    sampling::GrammarConstraint* constraint, TextCallback onText, const Tokenizer& tokenizer,
    std::vector<std::int32_t> eos, std::int64_t context)
    : m_sampler(params)
    , m_stop(params, std::move(eos))
    , m_detokenizer(tokenizer, true)
    , m_constraint(constraint)
    , m_onText(std::move(onText))
    , m_context(context)
    , m_needsLogits(!plainGreedy(params, constraint))
    , m_drawable(plainDraw(params, constraint))
    , m_greedyChecked(checkedGreedy(params, constraint))
{
}

bool AnswerProgress::allowsGreedy(std::int32_t token) const
{
    // As Sampler::sample keeps its first choice (allows refuses padding ids and any token once
    // the grammar has finished).
    return m_greedyChecked && m_constraint->allows(token);
}

kernels::TokenDraw AnswerProgress::nextDraw()
{
    return m_sampler.nextDraw();
}

Result<std::int32_t> AnswerProgress::choose(
    std::span<const float> logits, std::span<const std::int32_t> prompt)
{
    return m_sampler.sample(logits, prompt, m_result.ids, m_constraint);
}

Result<bool> AnswerProgress::add(std::int32_t token, std::int64_t sequenceLength)
{
    // The constraint follows the answer; without this it would judge every token against the
    // empty output.
    if (m_constraint)
        if (auto accepted = m_constraint->accept(token); !accepted)
            return accepted.error();
    m_result.ids.push_back(token);
    const std::string piece = m_detokenizer.push(token);
    const auto reason = m_stop.add(token, piece);
    const std::string releasable = m_stop.takeReleasable();
    if (!releasable.empty() && m_onText && !m_onText(releasable)) {
        m_result.cancelled = true;
        return false;
    }
    if (reason != sampling::StopReason::None) {
        m_result.reason = reason;
        return false;
    }
    // The configured context (not the model file's 262K): the token cannot be fed once the
    // sequence is full, so the answer ends cleanly with it.
    if (m_context > 0 && sequenceLength + 1 > m_context) {
        m_result.contextFull = true;
        return false;
    }
    return true;
}

void AnswerProgress::finish(bool cancelled)
{
    m_result.cancelled = m_result.cancelled || cancelled;
    if (m_result.reason == sampling::StopReason::None && !m_result.cancelled) {
        const std::string tail = m_detokenizer.flush();
        if (!tail.empty())
            m_stop.add(-1, tail);
        const std::string rest = m_stop.takeReleasable();
        if (!rest.empty() && m_onText)
            m_onText(rest);
    }
    m_result.text = m_stop.text();
}

} // namespace cw::engine
