#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace cw::kernels {

// One iteration of a spin-wait: the CPU's pause hint where it has one (a spinning core then
// yields its pipeline to its sibling), else a yield.
inline void cpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

// A fixed set of worker threads for data-parallel kernels. parallelFor splits [0, n) into
// chunks that the workers and the calling thread claim one at a time, and returns when all
// are done. A decode step runs a few hundred parallelFor calls, so hand-off latency matters
// more than anything: idle workers spin for a short while before sleeping, and chunks are
// claimed dynamically, so a worker the OS has descheduled (a busy machine) does not hold up
// the step; the caller simply takes its share. One parallelFor at a time per pool, and not
// from inside a task.
class ThreadPool {
public:
    explicit ThreadPool(int threads = 0); // 0: all hardware threads
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(m_workers.size()) + 1; }

    // fn(begin, end) over chunks of at least minChunk items (the last may be shorter).
    void parallelFor(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn,
        std::int64_t minChunk = 1);

private:
    void workerLoop();
    // Claims and runs chunks of region `generation` until none is left.
    void runChunks(std::uint32_t generation);

    std::vector<std::thread> m_workers;
    std::chrono::microseconds m_spinTime { 20 }; // idle spin before sleeping (thread_pool.cpp)
    // Region word: generation (high 24 bits), chunk count (middle 20), next chunk (low 20).
    alignas(64) std::atomic<std::uint64_t> m_claim { 0 };
    alignas(64) std::atomic<std::int64_t> m_finished { 0 };
    // Futex word the workers wait on: the generation of the newest region (or a stop).
    alignas(64) std::atomic<std::uint32_t> m_signal { 0 };
    std::atomic<int> m_sleepers { 0 };
    std::atomic<bool> m_stop { false };
    // The region's task; written before its generation is published, stable until it ends.
    const std::function<void(std::int64_t, std::int64_t)>* m_task = nullptr;
    std::int64_t m_n = 0;
    std::int64_t m_chunk = 0;
    std::uint32_t m_generation = 0;
};

} // namespace cw::kernels
