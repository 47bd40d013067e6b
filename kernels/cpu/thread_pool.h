#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cw::kernels {

// A fixed set of worker threads for data-parallel kernels. parallelFor splits [0, n) into
// contiguous ranges, runs them on the workers and the calling thread, and returns when
// all are done. One parallelFor at a time per pool (the engine's step is sequential).
class ThreadPool {
public:
    explicit ThreadPool(int threads = 0); // 0: all hardware threads
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(m_workers.size()) + 1; }

    // fn(begin, end) over chunks of at least minChunk items.
    void parallelFor(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn,
        std::int64_t minChunk = 1);

private:
    void workerLoop(int index);

    std::vector<std::thread> m_workers;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    const std::function<void(std::int64_t, std::int64_t)>* m_task = nullptr;
    std::int64_t m_n = 0;
    std::int64_t m_chunk = 0;
    std::uint64_t m_generation = 0;
    int m_pending = 0;
    bool m_stop = false;
};

} // namespace cw::kernels
