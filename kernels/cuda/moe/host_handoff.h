#pragma once

// A decode layer's hand-off of rows to a CPU worker and back, without the driver in between
// (issue 33's offloaded decode): a kernel writes the layer's rows, routing choices and weights
// into mapped host memory and then a request number; a CPU thread polling that number computes
// the host experts and writes their sums and the same number back; a second kernel waits for
// it and copies the sums to the device. A graph's host node does the same through the driver,
// whose round trip is tens of microseconds per layer on a virtual machine's host; here it is
// the PCIe writes' latency. The first kernel also splits each token's host choices between
// the CPU and the GPU (HostSplit), so it runs before the GPU's products on their stream; the
// second runs on a stream of its own beside them and holds one block while it waits.

#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda {

// In mapped, page-locked host memory: each side writes its own cache line.
struct alignas(128) HostHandoffControl {
    std::uint32_t request = 0; // written by the GPU: the request's number (0: none yet)
    std::int32_t layer = 0, rows = 0;
    std::uint32_t fromGpuPadding[29] = {};
    std::uint32_t done = 0; // written by the CPU: the number of the request it answered
    std::uint32_t fromCpuPadding[31] = {};
};

// The host buffers as the GPU addresses them (cudaHostGetDevicePointer of mapped memory).
struct HostHandoffBuffers {
    HostHandoffControl* control = nullptr;
    float* x = nullptr; // [rows][hidden]
    std::int32_t* ids = nullptr; // [rows][k]
    float* weights = nullptr; // [rows][k]
    const float* sums = nullptr; // [rows][hidden], written by the CPU
    // [layer][kTimesPerLayer] GPU clock stamps (%globaltimer, ns) of the layer's latest hand-off:
    // the request published, its answer seen, and the GPU's own share of the layer done
    // (handoffStampGpuDone); which of the last two comes later says which side ran long.
    // Null: not recorded.
    std::uint64_t* times = nullptr;
};

constexpr int kTimesPerLayer = 4; // published, answer seen, GPU done, (padding)

// How a layer's host experts are shared between the CPU and the GPU, decided per row of each
// step: of the row's choices that are in host memory (hostMask[e] != 0), the first
// cpuTake[*table][n] go to the CPU, n being how many there are (cpuTake: [tables][k + 1], the
// cost model's plans; *table, which of them, may change between steps, as may the plans); the
// rest the GPU reads in place. The GPU's copy of the
// ids names zeroExpert (a device expert of zeros) for those the CPU takes.
struct HostSplit {
    const std::uint8_t* hostMask = nullptr; // device [experts]
    const std::int32_t* cpuTake = nullptr; // device [tables][k + 1]
    const std::int32_t* table = nullptr; // device word: the row of cpuTake in use
    std::int32_t zeroExpert = 0; // the id of the zero expert in the GPU's expert tables
};

// Splits each row's choices (HostSplit): the CPU's ids (-1: not the CPU's) and all weights to
// the host buffers, the GPU's ids to gpuIds (device [rows][k]); copies x of `rows` rows to
// the host buffers; then numbers the request from *counter (device memory, one per hand-off
// channel: graphs replay the same kernels, so the numbers come from the device) and publishes
// it with `layer` and `rows`. Runs on the stream of the GPU's products (they read gpuIds).
cudaError_t handoffToHost(const HostHandoffBuffers& host, std::uint32_t* counter, int layer,
    int rows, const float* x, const std::int32_t* ids, const float* weights, std::int64_t hidden,
    int k, const HostSplit& split, std::int32_t* gpuIds, cudaStream_t stream);

// Waits until the CPU has answered the request *counter names, then copies its sums
// ([rows][hidden]) into out (device). A CPU that does not answer within `timeoutSeconds` traps
// the kernel: the step fails with a launch error instead of hanging.
cudaError_t handoffFromHost(const HostHandoffBuffers& host, const std::uint32_t* counter, int layer,
    int rows, std::int64_t hidden, float* out, double timeoutSeconds, cudaStream_t stream);

// On the stream of the GPU's own products, after them: stamps host.times[layer][2] (nothing
// when host.times is null).
cudaError_t handoffStampGpuDone(const HostHandoffBuffers& host, int layer, cudaStream_t stream);

} // namespace cw::kernels::cuda
