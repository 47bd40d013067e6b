#include "kernels/cpu/thread_pool.h"

#include <atomic>
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
