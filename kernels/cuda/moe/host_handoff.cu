#include "kernels/cuda/moe/host_handoff.h"

namespace cw::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWaitThreads = 512; // one row of 2,048 floats in one 16-byte load per thread

__device__ __forceinline__ std::uint32_t loadAcquireSystem(const std::uint32_t* p)
{
    std::uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void storeReleaseSystem(std::uint32_t* p, std::uint32_t v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ std::uint64_t globalNanoseconds()
{
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void handoffToHostKernel(HostHandoffBuffers host, std::uint32_t* counter, int layer,
    int rows, const float* x, const std::int32_t* ids, const float* weights, std::int64_t hidden,
    int k, HostSplit split, std::int32_t* gpuIds)
{
    // A thread a row splits its choices (rows: a decode step's few).
    for (int t = threadIdx.x; t < rows; t += blockDim.x) {
        const std::int64_t at = std::int64_t(t) * k;
        int hostChoices = 0;
        for (int j = 0; j < k; ++j) {
            const std::int32_t e = ids[at + j];
            hostChoices += e >= 0 && split.hostMask[e] ? 1 : 0;
        }
        int toCpu = split.cpuTake[*split.table * (k + 1) + hostChoices];
        for (int j = 0; j < k; ++j) {
            const std::int32_t e = ids[at + j];
            const bool cpu = toCpu > 0 && e >= 0 && split.hostMask[e];
            toCpu -= cpu ? 1 : 0;
            host.ids[at + j] = cpu ? e : -1;
            host.weights[at + j] = weights[at + j];
            gpuIds[at + j] = cpu ? split.zeroExpert : e;
        }
    }
    const std::int64_t n = std::int64_t(rows) * hidden;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x)
        host.x[i] = x[i];
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        const std::uint32_t request = *counter + 1 == 0 ? 1 : *counter + 1; // 0 is "none"
        *counter = request;
        host.control->layer = layer;
        host.control->rows = rows;
        if (host.times && layer >= 0)
            host.times[std::int64_t(layer) * kTimesPerLayer] = globalNanoseconds();
        storeReleaseSystem(&host.control->request, request);
    }
}

__global__ void handoffFromHostKernel(HostHandoffBuffers host, const std::uint32_t* counter,
    int layer, int rows, std::int64_t hidden, float* out, std::uint64_t timeoutNs)
{
    if (threadIdx.x == 0) {
        const std::uint32_t request = *counter;
        const std::uint64_t start = globalNanoseconds();
        while (loadAcquireSystem(&host.control->done) != request) {
            __nanosleep(100);
            if (globalNanoseconds() - start > timeoutNs)
                __trap(); // the CPU worker is gone: fail the step rather than hang
        }
        if (host.times && layer >= 0)
            host.times[std::int64_t(layer) * kTimesPerLayer + 1] = globalNanoseconds();
    }
    __syncthreads();
    // The sums were written before `done`; read them past the caches (a line of an earlier
    // request must not be served from L2).
    // Each read crosses PCIe at a microsecond's latency: 16 bytes a load, all threads at once.
    const std::int64_t n = std::int64_t(rows) * hidden;
    const std::int64_t vectors = n % 4 == 0 ? n / 4 : 0;
    const auto* from = reinterpret_cast<const float4*>(host.sums);
    auto* to = reinterpret_cast<float4*>(out);
    for (std::int64_t i = threadIdx.x; i < vectors; i += blockDim.x)
        to[i] = __ldcv(from + i);
    for (std::int64_t i = vectors * 4 + threadIdx.x; i < n; i += blockDim.x)
        out[i] = __ldcv(host.sums + i);
}

__global__ void stampKernel(std::uint64_t* slot)
{
    *slot = globalNanoseconds();
}

} // namespace

cudaError_t handoffToHost(const HostHandoffBuffers& host, std::uint32_t* counter, int layer,
    int rows, const float* x, const std::int32_t* ids, const float* weights, std::int64_t hidden,
    int k, const HostSplit& split, std::int32_t* gpuIds, cudaStream_t stream)
{
    if (rows <= 0 || !host.control || !counter || !split.hostMask || !split.cpuTake || !split.table
        || !gpuIds)
        return cudaErrorInvalidValue;
    handoffToHostKernel<<<1, kThreads, 0, stream>>>(
        host, counter, layer, rows, x, ids, weights, hidden, k, split, gpuIds);
    return cudaGetLastError();
}

cudaError_t handoffFromHost(const HostHandoffBuffers& host, const std::uint32_t* counter, int layer,
    int rows, std::int64_t hidden, float* out, double timeoutSeconds, cudaStream_t stream)
{
    if (rows <= 0 || !host.control || !counter)
        return cudaErrorInvalidValue;
    if (reinterpret_cast<std::uintptr_t>(host.sums) % 16 != 0
        || reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
        return cudaErrorInvalidValue;
    handoffFromHostKernel<<<1, kWaitThreads, 0, stream>>>(
        host, counter, layer, rows, hidden, out, std::uint64_t(timeoutSeconds * 1e9));
    return cudaGetLastError();
}

cudaError_t handoffStampGpuDone(const HostHandoffBuffers& host, int layer, cudaStream_t stream)
{
    if (!host.times || layer < 0)
        return cudaSuccess;
    stampKernel<<<1, 1, 0, stream>>>(host.times + std::int64_t(layer) * kTimesPerLayer + 2);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda
