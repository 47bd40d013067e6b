#include "app/server/answer_channel.h"

namespace cw::server {

bool AnswerChannel::push(std::string_view piece)
{
    {
        std::lock_guard lock(m_mutex);
        m_pending += piece;
        if (!m_firstText)
            m_firstText = Clock::now();
    }
    m_changed.notify_all();
    return !m_abandoned;
}

void AnswerChannel::finish(Outcome outcome)
{
    {
        std::lock_guard lock(m_mutex);
        m_outcome.emplace(std::move(outcome));
    }
    m_changed.notify_all();
}

bool AnswerChannel::finished() const
{
    std::lock_guard lock(m_mutex);
    return m_outcome.has_value();
}

std::optional<AnswerChannel::Clock::time_point> AnswerChannel::firstTextAt() const
{
    std::lock_guard lock(m_mutex);
    return m_firstText;
}

const AnswerChannel::Outcome* AnswerChannel::waitUntilFinished(Clock::time_point deadline)
{
    std::unique_lock lock(m_mutex);
    auto done = [this] { return m_outcome.has_value(); };
    if (deadline == Clock::time_point::max())
        m_changed.wait(lock, done);
    else if (!m_changed.wait_until(lock, deadline, done))
        return nullptr;
    return &*m_outcome;
}

AnswerChannel::Update AnswerChannel::next(Clock::time_point until)
{
    std::unique_lock lock(m_mutex);
    m_changed.wait_until(lock, until, [this] { return !m_pending.empty() || m_outcome; });
    Update update;
    if (!m_pending.empty())
        update.text.swap(m_pending);
    else if (m_outcome)
        update.finished = &*m_outcome;
    return update;
}

} // namespace cw::server
