#pragma once

#include "engine/common/result.h"
#include "engine/generation/generation_result.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cw::server {

// Carries one answer from the scheduler's thread (text pieces, then the result) to the HTTP
// thread that sends it. The HTTP side marks it abandoned when its client is gone, and the
// next piece then tells the scheduler to stop.
class AnswerChannel {
public:
    using Clock = std::chrono::steady_clock;
    using Outcome = Result<engine::GenerationResult>;

    // Scheduler side. push returns false once the answer is abandoned.
    bool push(std::string_view piece);
    void finish(Outcome outcome);

    // HTTP side.
    void abandon() { m_abandoned = true; }
    bool finished() const;
    std::optional<Clock::time_point> firstTextAt() const;
    // The outcome once finished; nullptr when `deadline` came first (time_point::max(): no
    // deadline).
    const Outcome* waitUntilFinished(Clock::time_point deadline);

    struct Update {
        std::string text; // pieces since the last call
        const Outcome* finished = nullptr; // set once every piece has been taken
    };
    // Waits until there is text or the outcome, or `until` passes (then both are empty).
    Update next(Clock::time_point until);

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::string m_pending;
    std::optional<Outcome> m_outcome;
    std::optional<Clock::time_point> m_firstText;
    std::atomic<bool> m_abandoned { false };
};

} // namespace cw::server
