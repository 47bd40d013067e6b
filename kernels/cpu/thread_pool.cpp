#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace cw::kernels {

namespace {

constexpr int kGenerationBits = 24;
constexpr int kCountBits = 20;
constexpr std::uint64_t kIndexMask = (std::uint64_t(1) << 20) - 1;
constexpr std::uint32_t kGenerationMask = (std::uint32_t(1) << kGenerationBits) - 1;
constexpr std::int64_t kMaxChunks = std::int64_t(kIndexMask);
// How long an idle worker spins before sleeping: longer than the gap between two kernels of
// one forward step (norms, routing, the serial parts), much shorter than the gap between two
// user requests. A sleeping worker costs a futex wake in every region, tens of microseconds in
// a virtual machine, paid once per sleeper: on the 16-core Xeon (a VM) 1 ms of spinning
// decoded 12.2-13.0 tokens/s against 10.8-11.6 with 20 us (tests/bench/decode/README.md). A
// small pool keeps the short spin: there a worker that spins takes its core from the other
// processes of a busy machine (the tests run side by side). CW_THREAD_SPIN_US overrides both.
std::chrono::microseconds spinTimeFor(int threads)
{
    const char* v = std::getenv("CW_THREAD_SPIN_US");
    const long us = v ? std::strtol(v, nullptr, 10) : 0;
    if (us > 0)
        return std::chrono::microseconds(us);
    return std::chrono::microseconds(threads >= 8 ? 1000 : 20);
}

std::uint64_t regionWord(std::uint32_t generation, std::int64_t chunks, std::int64_t next)
{
    return (std::uint64_t(generation) << (64 - kGenerationBits))
        | (std::uint64_t(chunks) << kCountBits) | std::uint64_t(next);
}

} // namespace

ThreadPool::ThreadPool(int threads)
{
    if (threads <= 0)
        threads = int(std::max(1u, std::thread::hardware_concurrency()));
    m_spinTime = spinTimeFor(threads);
    for (int i = 1; i < threads; ++i)
        m_workers.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool()
{
    m_stop.store(true);
    m_signal.fetch_add(1);
    m_signal.notify_all();
    for (auto& worker : m_workers)
        worker.join();
}

void ThreadPool::parallelFor(std::int64_t n,
    const std::function<void(std::int64_t, std::int64_t)>& fn, std::int64_t minChunk)
{
    if (n <= 0)
        return;
    // A few chunks per thread balance the load when a thread starts late.
    std::int64_t chunk = std::max<std::int64_t>(
        std::max<std::int64_t>(1, minChunk), (n + 4 * size() - 1) / (4 * size()));
    chunk = std::max(chunk, (n + kMaxChunks - 1) / kMaxChunks);
    const std::int64_t chunks = (n + chunk - 1) / chunk;
    if (chunks <= 1 || m_workers.empty()) {
        fn(0, n);
        return;
    }
    m_task = &fn;
    m_n = n;
    m_chunk = chunk;
    m_finished.store(0, std::memory_order_relaxed);
    m_generation = (m_generation + 1) & kGenerationMask;
    m_claim.store(regionWord(m_generation, chunks, 0)); // publishes the fields above
    m_signal.store(m_generation);
    if (m_sleepers.load() > 0)
        m_signal.notify_all();
    runChunks(m_generation);
    // Chunks a worker claimed may still be running; wait for them, politely when it is long.
    const auto start = std::chrono::steady_clock::now();
    for (int spin = 0; m_finished.load(std::memory_order_acquire) != chunks; ++spin) {
        if (spin < 2000)
            cpuRelax();
        else if (std::chrono::steady_clock::now() - start > m_spinTime)
            std::this_thread::yield();
        else
            cpuRelax();
    }
}

void ThreadPool::runChunks(std::uint32_t generation)
{
    std::uint64_t word = m_claim.load(std::memory_order_acquire);
    for (;;) {
        if (std::uint32_t(word >> (64 - kGenerationBits)) != generation)
            return;
        const std::int64_t chunks = std::int64_t((word >> kCountBits) & kIndexMask);
        const std::int64_t index = std::int64_t(word & kIndexMask);
        if (index >= chunks)
            return;
        if (!m_claim.compare_exchange_weak(
                word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire))
            continue;
        // The region cannot end before this chunk does, so its fields are stable.
        const std::int64_t begin = index * m_chunk;
        const std::int64_t end = std::min(m_n, begin + m_chunk);
        (*m_task)(begin, end);
        m_finished.fetch_add(1, std::memory_order_release);
        word = m_claim.load(std::memory_order_acquire);
    }
}

void ThreadPool::workerLoop()
{
    std::uint32_t seen = 0;
    for (;;) {
        std::uint32_t signal = m_signal.load(std::memory_order_acquire);
        if (signal == seen) {
            const auto start = std::chrono::steady_clock::now();
            for (int spin = 0; signal == seen; ++spin) {
                if ((spin & 255) == 255 && std::chrono::steady_clock::now() - start > m_spinTime) {
                    m_sleepers.fetch_add(1);
                    m_signal.wait(seen);
                    m_sleepers.fetch_sub(1);
                } else {
                    cpuRelax();
                }
                signal = m_signal.load(std::memory_order_acquire);
            }
        }
        if (m_stop.load())
            return;
        seen = signal;
        runChunks(signal & kGenerationMask);
    }
}

} // namespace cw::kernels
