// matVec throughput per tensor type: a weight matrix of about 128 MB (4096 columns) is
// multiplied by one vector, best of several runs; GB/s counts weight bytes read. For
// comparison, a stream-like loop reads a 512 MB buffer. Then the integer products of the
// k-quants with x quantized to Q8_K (what the engine decodes with), also on a matrix small
// enough to stay in L2, timed in thread CPU time, so the figure is the kernel's compute
// throughput even on a busy machine. Usage: quant_matvec_bench [MB] [threads]
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/dot_q8k.h"
#include "kernels/cpu/quant/quant_blocks.h"
#include "kernels/cpu/quant/quantize.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <time.h>
#include <vector>

using namespace cw::kernels;
using namespace cw::kernels::quant;

namespace {

double seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double threadCpuSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Best-of-5 read bandwidth of a plain summing loop over `bytes`, split over the pool.
double readBandwidth(std::size_t bytes, ThreadPool& pool)
{
    std::vector<std::uint64_t> buffer(bytes / 8);
    for (std::size_t i = 0; i < buffer.size(); ++i)
        buffer[i] = i;
    double best = 1e30;
    std::vector<std::uint64_t> sums(std::size_t(pool.size()) * 8, 0);
    for (int run = 0; run < 5; ++run) {
        const auto start = std::chrono::steady_clock::now();
        const std::int64_t chunks = pool.size();
        pool.parallelFor(chunks, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t c = b; c < e; ++c) {
                const std::size_t lo = buffer.size() * std::size_t(c) / std::size_t(chunks);
                const std::size_t hi = buffer.size() * std::size_t(c + 1) / std::size_t(chunks);
                std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                for (std::size_t i = lo; i + 4 <= hi; i += 4) {
                    s0 += buffer[i];
                    s1 += buffer[i + 1];
                    s2 += buffer[i + 2];
                    s3 += buffer[i + 3];
                }
                sums[std::size_t(c) * 8] = s0 + s1 + s2 + s3;
            }
        });
        best = std::min(best, seconds(start));
    }
    std::uint64_t total = 0;
    for (auto s : sums)
        total += s;
    if (total == 42)
        std::printf(" ");
    return double(bytes) / best / 1e9;
}

// One quantized row of `cols` values, replicated to fill `rows` rows.
std::vector<std::uint8_t> makeMatrix(
    TensorType type, std::int64_t rows, std::int64_t cols, std::size_t rowBytes)
{
    std::mt19937 rng(1);
    std::normal_distribution<float> dist;
    std::vector<float> src(static_cast<std::size_t>(cols));
    for (auto& v : src)
        v = dist(rng);
    std::vector<std::uint8_t> row(rowBytes);
    if (!quantizeRow(type, src.data(), row.data(), cols)) {
        // Types without a quantizer: random bytes, block scales set to 1.0.
        for (auto& b : row)
            b = std::uint8_t(rng());
        const auto traits = *tensorTypeTraits(std::uint32_t(type));
        for (std::size_t off = 0; off < rowBytes; off += traits.blockBytes) {
            const Half one = 0x3C00;
            if (type == TensorType::Q2_K) {
                std::memcpy(&row[off + 80], &one, 2);
                std::memcpy(&row[off + 82], &one, 2);
            } else if (type == TensorType::Q3_K) {
                std::memcpy(&row[off + 108], &one, 2);
            } else {
                std::memcpy(&row[off], &one, 2); // d first: Q4_1, Q5_*, IQ4_XS
                if (type == TensorType::Q4_1 || type == TensorType::Q5_1)
                    std::memcpy(&row[off + 2], &one, 2);
            }
        }
    }
    std::vector<std::uint8_t> matrix(rowBytes * std::size_t(rows));
    for (std::int64_t r = 0; r < rows; ++r)
        std::memcpy(matrix.data() + std::size_t(r) * rowBytes, row.data(), rowBytes);
    return matrix;
}

} // namespace

int main(int argc, char** argv)
{
    const double megabytes = argc > 1 ? std::atof(argv[1]) : 128.0;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
    ThreadPool pool(threads);
    ThreadPool single(1);
    std::printf("threads: %d, AVX2/FMA/F16C: %s\n", pool.size(), cpuSupportsAvx2() ? "yes" : "no");
    std::printf("memory read bandwidth (512 MB, summing loop): %.1f GB/s with 1 thread, %.1f GB/s "
                "with %d\n",
        readBandwidth(std::size_t(512) << 20, single), readBandwidth(std::size_t(512) << 20, pool),
        pool.size());
    std::printf(
        "%-8s %12s %14s %14s %14s\n", "type", "matrix MB", "portable 1t", "avx2 1t", "avx2 all");
    const std::int64_t cols = 4096;
    std::vector<float> x(static_cast<std::size_t>(cols), 0.5f);
    for (TensorType type : { TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q8_0,
             TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
             TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
             TensorType::Q6_K, TensorType::IQ4_XS }) {
        const std::size_t rowBytes = *cw::kernels::rowBytes(type, std::uint64_t(cols));
        const auto rows = std::int64_t(megabytes * 1e6 / double(rowBytes));
        const auto matrix = makeMatrix(type, rows, cols, rowBytes);
        std::vector<float> y(static_cast<std::size_t>(rows));
        auto measure = [&](CpuKernelPath path, ThreadPool* p) {
            setCpuKernelPath(path);
            if (path == CpuKernelPath::Avx2 && activeCpuKernelPath() != CpuKernelPath::Avx2)
                return 0.0;
            double best = 1e30;
            for (int run = 0; run < 4; ++run) {
                const auto start = std::chrono::steady_clock::now();
                matVec(type, matrix.data(), rowBytes, rows, cols, x.data(), y.data(), p);
                best = std::min(best, seconds(start));
            }
            return double(matrix.size()) / best / 1e9;
        };
        const double portable = measure(CpuKernelPath::Portable, &single);
        const double avx1 = measure(CpuKernelPath::Avx2, &single);
        const double avxAll = measure(CpuKernelPath::Avx2, &pool);
        std::printf("%-8s %12.1f %11.2f GB/s %9.2f GB/s %9.2f GB/s\n",
            std::string(tensorTypeTraits(std::uint32_t(type))->name).c_str(),
            double(matrix.size()) / 1e6, portable, avx1, avxAll);
    }

    std::printf(
        "\ninteger products, x as Q8_K (GB/s of weights; 'in L2': 256 KB matrix, thread CPU "
        "time)\n%-8s %14s %14s %14s %14s %14s %14s %14s\n",
        "type", "portable L2", "avx2 L2", "avx512 L2", "a512vnni L2", "avx2 1t", "best 1t",
        "best all");
    std::vector<float> xf(static_cast<std::size_t>(cols));
    for (std::size_t i = 0; i < xf.size(); ++i)
        xf[i] = float(int(i % 17) - 8) * 0.1f;
    std::vector<BlockQ8K> xq(static_cast<std::size_t>(cols / kQK_K));
    quantizeRowQ8K(xf.data(), xq.data(), cols);
    for (TensorType type : { TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K }) {
        const std::size_t rowBytes = *cw::kernels::rowBytes(type, std::uint64_t(cols));
        auto measure = [&](CpuKernelPath path, ThreadPool* p, double mb, bool cpuTime) {
            setCpuKernelPath(path);
            if (activeCpuKernelPath() != path)
                return 0.0;
            const auto rows = std::max<std::int64_t>(1, std::int64_t(mb * 1e6 / double(rowBytes)));
            const auto matrix = makeMatrix(type, rows, cols, rowBytes);
            std::vector<float> y(static_cast<std::size_t>(rows));
            const int repeats = cpuTime ? 400 : 1;
            double best = 1e30;
            for (int run = 0; run < 5; ++run) {
                const auto start = std::chrono::steady_clock::now();
                const double cpu0 = threadCpuSeconds();
                for (int k = 0; k < repeats; ++k)
                    matMulQ8K(type, matrix.data(), rowBytes, rows, cols, xq.data(), 1, y.data(), p);
                best = std::min(best, cpuTime ? threadCpuSeconds() - cpu0 : seconds(start));
            }
            return double(matrix.size()) * repeats / best / 1e9;
        };
        const double portable = measure(CpuKernelPath::Portable, nullptr, 0.25, true);
        const double inCache = measure(CpuKernelPath::Avx2, nullptr, 0.25, true);
        setQ8KVnni(false);
        const double inCache512 = measure(CpuKernelPath::Avx512, nullptr, 0.25, true);
        setQ8KVnni(true);
        const double inCacheVnni
            = cpuFeatures().avx512vnni ? measure(CpuKernelPath::Avx512, nullptr, 0.25, true) : 0.0;
        const double avx1 = measure(CpuKernelPath::Avx2, &single, megabytes, false);
        const double best1 = measure(detectedCpuKernelPath(), &single, megabytes, false);
        const double bestAll = measure(detectedCpuKernelPath(), &pool, megabytes, false);
        std::printf(
            "%-8s %9.2f GB/s %9.2f GB/s %9.2f GB/s %9.2f GB/s %9.2f GB/s %9.2f GB/s %9.2f GB/s\n",
            std::string(tensorTypeTraits(std::uint32_t(type))->name).c_str(), portable, inCache,
            inCache512, inCacheVnni, avx1, best1, bestAll);
    }

    // Prompt processing: 16 tokens against a 256 KB matrix (in L2), one thread, thread CPU
    // time; multiply-accumulates per second, each weight used by every token.
    constexpr std::int64_t kTokens = 16;
    std::printf("\ninteger products of %lld tokens (prompt tiles), matrix in L2, one thread "
                "(G multiply-adds/s)\n%-8s %14s %14s %14s\n",
        (long long)kTokens, "type", "avx2", "avx512", "avx512 vnni");
    std::vector<float> xt(static_cast<std::size_t>(kTokens * cols));
    for (std::size_t i = 0; i < xt.size(); ++i)
        xt[i] = float(int(i % 23) - 11) * 0.1f;
    std::vector<BlockQ8K> xtq(static_cast<std::size_t>(kTokens * cols / kQK_K));
    for (std::int64_t t = 0; t < kTokens; ++t)
        quantizeRowQ8K(xt.data() + t * cols, xtq.data() + t * (cols / kQK_K), cols);
    for (TensorType type : { TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K }) {
        const std::size_t rowBytes = *cw::kernels::rowBytes(type, std::uint64_t(cols));
        const auto rows = std::max<std::int64_t>(1, std::int64_t(0.25e6 / double(rowBytes)));
        const auto matrix = makeMatrix(type, rows, cols, rowBytes);
        std::vector<float> y(static_cast<std::size_t>(kTokens * rows));
        auto rate = [&](CpuKernelPath path) {
            setCpuKernelPath(path);
            if (activeCpuKernelPath() != path)
                return 0.0;
            double best = 1e30;
            for (int run = 0; run < 5; ++run) {
                const double cpu0 = threadCpuSeconds();
                for (int k = 0; k < 40; ++k)
                    matMulQ8K(type, matrix.data(), rowBytes, rows, cols, xtq.data(), kTokens,
                        y.data(), nullptr);
                best = std::min(best, threadCpuSeconds() - cpu0);
            }
            return double(rows) * double(cols) * double(kTokens) * 40 / best / 1e9;
        };
        const double avx2 = rate(CpuKernelPath::Avx2);
        setQ8KVnni(false);
        const double avx512 = rate(CpuKernelPath::Avx512);
        setQ8KVnni(true);
        const double vnni = cpuFeatures().avx512vnni ? rate(CpuKernelPath::Avx512) : 0.0;
        std::printf("%-8s %14.1f %14.1f %14.1f\n",
            std::string(tensorTypeTraits(std::uint32_t(type))->name).c_str(), avx2, avx512, vnni);
    }
    setCpuKernelPath(detectedCpuKernelPath());
    return 0;
}
