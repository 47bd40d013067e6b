#include "kernels/cpu/thread_pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <gtest/gtest.h>
#include <vector>

TEST(ThreadPool, visitsEveryIndexExactlyOnce)
{
    cw::kernels::ThreadPool pool(4);
    for (std::int64_t n : { 1, 3, 4, 5, 97, 1000 }) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        pool.parallelFor(n, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i)
                hits[std::size_t(i)].fetch_add(1);
        });
        for (auto& h : hits)
            EXPECT_EQ(h.load(), 1) << "n=" << n;
    }
}

TEST(ThreadPool, runsManyRoundsBackToBack)
{
    cw::kernels::ThreadPool pool(3);
    std::atomic<std::int64_t> sum { 0 };
    for (int round = 0; round < 500; ++round)
        pool.parallelFor(10, [&](std::int64_t b, std::int64_t e) { sum += e - b; });
    EXPECT_EQ(sum.load(), 5000);
}

TEST(ThreadPool, chunksAreAtLeastMinChunkExceptTheLast)
{
    cw::kernels::ThreadPool pool(2);
    std::atomic<int> shortChunks { 0 }, calls { 0 };
    std::atomic<std::int64_t> covered { 0 };
    pool.parallelFor(
        1000,
        [&](std::int64_t begin, std::int64_t end) {
            ++calls;
            covered += end - begin;
            if (end - begin < 96 && end != 1000)
                ++shortChunks;
        },
        96);
    EXPECT_EQ(shortChunks.load(), 0);
    EXPECT_EQ(covered.load(), 1000);
    EXPECT_GE(calls.load(), 2); // split, so both threads can take part
}

TEST(ThreadPool, finishesWhenOneChunkIsSlow)
{
    // Chunks are claimed one at a time: the fast thread takes the remaining ones while the
    // other is stuck in its chunk, and the call returns only after every chunk has run.
    cw::kernels::ThreadPool pool(2);
    std::vector<std::atomic<int>> hits(64);
    pool.parallelFor(
        64,
        [&](std::int64_t begin, std::int64_t end) {
            if (begin == 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            for (std::int64_t i = begin; i < end; ++i)
                hits[std::size_t(i)].fetch_add(1);
        },
        1);
    for (auto& h : hits)
        EXPECT_EQ(h.load(), 1);
}
