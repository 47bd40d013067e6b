// Whether the GPU's reads of mapped host memory and the CPU's own reads share one limit: each
// side's rate alone and both at once, for several CPU thread counts. The offloaded decode's
// split (issue 33) has the CPU compute some host experts while the GPU reads the others over
// PCIe; it can only beat either side alone if their sum, run together, is above both.
// Not a test: run by hand or by tests/gpu/run_on_device.sh contention; one JSON line per row.
//   gpu_host_contention_bench [GiB per buffer, default 4] [thread counts..., default 1 4 8 15]

#include "kernels/cuda/moe/moe_experts.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <immintrin.h>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char* what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

// Sums 32-byte words of [p, p + bytes): a streaming read the prefetchers can run at full speed.
__attribute__((target("avx2"))) std::uint64_t readRange(const std::byte* p, std::size_t bytes)
{
    __m256i acc = _mm256_setzero_si256();
    for (std::size_t i = 0; i + 32 <= bytes; i += 32)
        acc = _mm256_xor_si256(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    alignas(32) std::uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    return lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
}

// `threads` readers, each over its own slice of the buffer again and again until stopped.
class CpuReaders {
public:
    CpuReaders(const std::byte* data, std::size_t bytes, int threads)
    {
        const std::size_t slice = bytes / std::size_t(threads) / 4096 * 4096;
        m_bytes = std::vector<std::atomic<std::uint64_t>>(std::size_t(threads));
        for (int t = 0; t < threads; ++t)
            m_threads.emplace_back([this, t, p = data + slice * std::size_t(t), slice] {
                std::uint64_t sink = 0;
                constexpr std::size_t kChunk = std::size_t(1) << 20;
                while (!m_stop.load(std::memory_order_relaxed))
                    for (std::size_t o = 0;
                         o + kChunk <= slice && !m_stop.load(std::memory_order_relaxed);
                         o += kChunk) {
                        sink ^= readRange(p + o, kChunk);
                        m_bytes[std::size_t(t)].fetch_add(kChunk, std::memory_order_relaxed);
                    }
                m_sink.fetch_xor(sink);
            });
    }
    ~CpuReaders()
    {
        m_stop = true;
        for (auto& t : m_threads)
            t.join();
    }
    std::uint64_t bytes() const
    {
        std::uint64_t sum = 0;
        for (const auto& b : m_bytes)
            sum += b.load(std::memory_order_relaxed);
        return sum;
    }

private:
    std::vector<std::thread> m_threads;
    std::vector<std::atomic<std::uint64_t>> m_bytes;
    std::atomic<bool> m_stop { false };
    std::atomic<std::uint64_t> m_sink { 0 };
};

double seconds(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

double cpuAlone(const std::byte* data, std::size_t bytes, int threads)
{
    CpuReaders readers(data, bytes, threads);
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // every thread running
    const auto b0 = readers.bytes();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return double(readers.bytes() - b0) / seconds(t0, Clock::now());
}

// The GPU reads the whole mapped buffer `passes` times; its rate by events.
double gpuRead(
    const void* mapped, std::size_t bytes, int passes, std::uint32_t* sink, cudaStream_t stream)
{
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "event");
    check(cudaEventCreate(&stop), "event");
    check(cudaEventRecord(start, stream), "record");
    for (int i = 0; i < passes; ++i)
        check(cw::kernels::cuda::readBytesProbe(mapped, bytes, sink, stream), "probe");
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return double(bytes) * passes / (ms * 1e-3);
}

} // namespace

int main(int argc, char** argv)
{
    const double gib = argc > 1 ? std::atof(argv[1]) : 4.0;
    std::vector<int> threadCounts;
    for (int i = 2; i < argc; ++i)
        threadCounts.push_back(std::atoi(argv[i]));
    if (threadCounts.empty())
        threadCounts = { 1, 4, 8, 15 };
    const std::size_t bytes = std::size_t(gib * double(1ull << 30)) / 4096 * 4096;

    void *gpuSide = nullptr, *cpuSide = nullptr;
    check(cudaHostAlloc(&gpuSide, bytes, cudaHostAllocMapped), "pinned (GPU's)");
    check(cudaHostAlloc(&cpuSide, bytes, cudaHostAllocDefault), "pinned (CPU's)");
    std::memset(gpuSide, 0x5a, bytes);
    std::memset(cpuSide, 0xa5, bytes);
    void* mapped = nullptr;
    check(cudaHostGetDevicePointer(&mapped, gpuSide, 0), "mapped pointer");
    std::uint32_t* sink = nullptr;
    check(cudaMalloc(&sink, sizeof(std::uint32_t)), "sink");
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    const auto* cpuBytes = static_cast<const std::byte*>(cpuSide);

    gpuRead(mapped, bytes, 1, sink, stream); // warm: the mappings made
    const double gpuAlone = gpuRead(mapped, bytes, 3, sink, stream);
    std::printf("{\"row\": \"gpu alone\", \"gpu_gb_per_s\": %.1f}\n", gpuAlone * 1e-9);
    for (const int threads : threadCounts) {
        const double cpu = cpuAlone(cpuBytes, bytes, threads);
        double gpuTogether = 0.0, cpuTogether = 0.0;
        {
            CpuReaders readers(cpuBytes, bytes, threads);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const auto b0 = readers.bytes();
            const auto t0 = Clock::now();
            gpuTogether = gpuRead(mapped, bytes, 3, sink, stream);
            cpuTogether = double(readers.bytes() - b0) / seconds(t0, Clock::now());
        }
        std::printf("{\"row\": \"cpu threads\", \"threads\": %d, \"cpu_alone_gb_per_s\": %.1f, "
                    "\"gpu_alone_gb_per_s\": %.1f, \"cpu_together_gb_per_s\": %.1f, "
                    "\"gpu_together_gb_per_s\": %.1f, \"sum_together_gb_per_s\": %.1f}\n",
            threads, cpu * 1e-9, gpuAlone * 1e-9, cpuTogether * 1e-9, gpuTogether * 1e-9,
            (cpuTogether + gpuTogether) * 1e-9);
        std::fflush(stdout);
    }
    cudaFree(sink);
    cudaFreeHost(gpuSide);
    cudaFreeHost(cpuSide);
    return 0;
}
