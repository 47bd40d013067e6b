#pragma once

// Wall time per part of the forward pass, summed over steps, so a benchmark can say where a
// decoded token's time goes without a profiler. A clock read costs ~20 ns and a step reads it
// a few hundred times, so the timers are always on.

#include <array>
#include <chrono>
#include <cstdint>

namespace cw::engine {

enum class StepPart : int {
    Embedding,
    Norms, // RMSNorms, residual adds, finite checks
    AttentionProjections, // q, k, v, o
    AttentionCore, // q/k norms, rope, cache writes, softmax(QK)V, output gate
    DeltaNetProjections, // qkv, z, a, b, out
    DeltaNetCore, // conv, decay, recurrence, gated norm
    Router, // router matVec, softmax, top-k
    ExpertsGateUp, // routed experts' gate and up products and SiLU
    ExpertsDown, // routed experts' down products and the weighted sum
    SharedExpert,
    OutputHead, // final norm and lm_head
    Count
};

const char* stepPartName(StepPart part);

struct StepTimers {
    std::array<double, std::size_t(StepPart::Count)> seconds {};
    std::int64_t steps = 0;
    void reset() { *this = StepTimers {}; }
    double total() const
    {
        double sum = 0.0;
        for (double s : seconds)
            sum += s;
        return sum;
    }
};

// Adds the time from construction to destruction (or to stop()) to one part.
class PartTimer {
public:
    PartTimer(StepTimers* timers, StepPart part)
        : m_timers(timers)
        , m_part(part)
        , m_start(std::chrono::steady_clock::now())
    {
    }
    ~PartTimer() { stop(); }
    PartTimer(const PartTimer&) = delete;
    PartTimer& operator=(const PartTimer&) = delete;
    void stop()
    {
        if (!m_timers)
            return;
        m_timers->seconds[std::size_t(m_part)]
            += std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
        m_timers = nullptr;
    }

private:
    StepTimers* m_timers;
    StepPart m_part;
    std::chrono::steady_clock::time_point m_start;
};

} // namespace cw::engine
