#include "kernels/cpu/thread_pool.h"

#include <algorithm>

namespace cw::kernels {

ThreadPool::ThreadPool(int threads)
{
    if (threads <= 0)
        threads = int(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 1; i < threads; ++i)
        m_workers.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& worker : m_workers)
        worker.join();
}

void ThreadPool::parallelFor(std::int64_t n,
    const std::function<void(std::int64_t, std::int64_t)>& fn, std::int64_t minChunk)
{
    if (n <= 0)
        return;
    const std::int64_t parts = std::min<std::int64_t>(
        size(), std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, minChunk)));
    if (parts <= 1 || m_workers.empty()) {
        fn(0, n);
        return;
    }
    const std::int64_t chunk = (n + parts - 1) / parts;
    {
        std::lock_guard lock(m_mutex);
        m_task = &fn;
        m_n = n;
        m_chunk = chunk;
        m_pending = int(m_workers.size());
        ++m_generation;
    }
    m_wake.notify_all();
    fn(0, std::min(chunk, n)); // the caller takes part 0
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [this] { return m_pending == 0; });
    m_task = nullptr;
}

void ThreadPool::workerLoop(int index)
{
    std::uint64_t seen = 0;
    for (;;) {
        const std::function<void(std::int64_t, std::int64_t)>* task = nullptr;
        std::int64_t begin = 0;
        std::int64_t end = 0;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop)
                return;
            seen = m_generation;
            task = m_task;
            begin = std::min(m_n, std::int64_t(index) * m_chunk);
            end = std::min(m_n, begin + m_chunk);
        }
        if (begin < end)
            (*task)(begin, end);
        {
            std::lock_guard lock(m_mutex);
            if (--m_pending == 0)
                m_done.notify_one();
        }
    }
}

} // namespace cw::kernels
