// Micro-benchmark of one DeltaNet layer's core (gatedDeltaNet) at Qwen3.6-35B-A3B's shapes:
// decode at batch 1 and 32 (GB/s of recurrent-state traffic, each head's state read and written
// once), prefill of 512 and 8192 tokens (ms) for each recurrence variant, and the prefill's
// stages one by one.
//   gpu_deltanet_bench
// At batch 1, decode cycles through 30 layers' states (2 MB each) so that they do not sit in L2
// between calls; at batch 32 one layer's states (64 MB) already exceed it.
#include "tests/gpu/deltanet/delta_net_problem.h"

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <memory>
#include <vector>

namespace {

using namespace cw::test;
namespace dn = cw::kernels::cuda::deltanet;

constexpr int kLayers = 30;

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        const cudaError_t err_ = (expr);                                                           \
        if (err_ != cudaSuccess) {                                                                 \
            std::fprintf(                                                                          \
                stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(err_));    \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

DeltaNetShape qwenShape()
{
    DeltaNetShape s;
    s.keyHeads = 16;
    s.valueHeads = 32;
    s.keyDim = 128;
    s.valueDim = 128;
    s.convKernel = 4;
    s.valueHeadsTiled = true;
    return s;
}

class Timer {
public:
    Timer()
    {
        CHECK(cudaEventCreate(&m_start));
        CHECK(cudaEventCreate(&m_stop));
    }
    ~Timer()
    {
        cudaEventDestroy(m_start);
        cudaEventDestroy(m_stop);
    }
    void start(cudaStream_t s) { CHECK(cudaEventRecord(m_start, s)); }
    float stopMs(cudaStream_t s)
    {
        CHECK(cudaEventRecord(m_stop, s));
        CHECK(cudaEventSynchronize(m_stop));
        float ms = 0.0f;
        CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
        return ms;
    }

private:
    cudaEvent_t m_start = nullptr, m_stop = nullptr;
};

void benchDecode(int batch, cudaStream_t stream)
{
    const DeltaNetShape shape = qwenShape();
    std::vector<int> lengths(std::size_t(batch), 1), slots;
    for (int s = 0; s < batch; ++s)
        slots.push_back(s);
    const int instances = batch == 1 ? kLayers : 2;
    const DeltaNetLayerData data = randomLayer(shape, batch, 10);
    const DeltaNetStepData step = randomStep(shape, lengths, slots, 11);
    std::vector<std::unique_ptr<DeviceDeltaNet>> layers;
    for (int l = 0; l < instances; ++l) {
        layers.push_back(std::make_unique<DeviceDeltaNet>(data));
        CHECK(layers.back()->upload(step));
    }
    const double stateBytes
        = double(batch) * shape.valueHeads * shape.keyDim * shape.valueDim * sizeof(float) * 2.0;
    Timer timer;
    for (int columns : { 16, 32 }) {
        dn::Tuning tuning;
        tuning.decodeColumns = columns;
        for (int l = 0; l < kLayers; ++l)
            CHECK(layers[std::size_t(l % instances)]->enqueue(stream, tuning));
        constexpr int kRounds = 20;
        timer.start(stream);
        for (int r = 0; r < kRounds; ++r)
            for (int l = 0; l < kLayers; ++l)
                CHECK(layers[std::size_t(l % instances)]->enqueue(stream, tuning));
        const double us = timer.stopMs(stream) * 1e3 / (kRounds * kLayers);
        std::printf("decode batch %2d columns %d: %7.2f us/layer, %7.1f GB/s state traffic "
                    "(stream launches)\n",
            batch, columns, us, stateBytes / (us * 1e-6) / 1e9);
    }

    // The 30 layers of one token as a CUDA graph, as the backend replays a decode step.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int l = 0; l < kLayers; ++l)
        CHECK(layers[std::size_t(l % instances)]->enqueue(stream, dn::Tuning {}));
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, stream));
    constexpr int kReplays = 50;
    timer.start(stream);
    for (int r = 0; r < kReplays; ++r)
        CHECK(cudaGraphLaunch(exec, stream));
    const double us = timer.stopMs(stream) * 1e3 / kReplays;
    std::printf("decode batch %2d default: %7.1f us per token for %d layers in a graph "
                "(%.2f us/layer, %.1f GB/s)\n",
        batch, us, kLayers, us / kLayers, stateBytes * kLayers / (us * 1e-6) / 1e9);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
}

// The prefill's stages launched one by one between events, as gatedDeltaNetTuned orders them.
void benchPrefillStages(DeviceDeltaNet& device, const DeltaNetShape& shape, cudaStream_t stream)
{
    const auto layout = device.layout();
    const dn::ScratchLayout at = dn::scratchLayout(shape, layout);
    const dn::Dims dims = dn::makeDims(shape);
    const dn::Rows rows = dn::rowsOf(layout);
    std::byte* base = device.scratch().data;
    auto* conv = reinterpret_cast<float*>(base + at.conv);
    auto* cum = reinterpret_cast<float*>(base + at.cum);
    auto* wT = reinterpret_cast<float*>(base + at.wT);
    auto* qT = reinterpret_cast<float*>(base + at.qT);
    const auto states = device.states();
    Timer timer;
    float ms[5] = {};
    constexpr int kRounds = 5;
    for (int r = 0; r < kRounds; ++r) {
        timer.start(stream);
        CHECK(
            dn::launchConvGates(device.qkv(), device.alpha(), device.betaRaw(), device.convWeight(),
                device.dtBias(), device.negA(), dims, rows, states.conv, conv, stream));
        ms[0] += timer.stopMs(stream);
        timer.start(stream);
        CHECK(dn::launchConvStateAdvance(device.qkv(), dims, rows, states.conv, stream));
        ms[1] += timer.stopMs(stream);
        timer.start(stream);
        CHECK(dn::launchChunkTransform(conv, device.alpha(), device.betaRaw(), dims, rows,
            at.chunkCapacity, cum, wT, qT, device.core(), stream));
        ms[2] += timer.stopMs(stream);
        timer.start(stream);
        CHECK(dn::launchChunkRecurrence(
            conv, cum, wT, qT, dims, rows, states.recurrent, device.core(), 0, -1, stream));
        ms[3] += timer.stopMs(stream);
        timer.start(stream);
        CHECK(dn::launchGatedNorm(
            device.z(), device.normWeight(), dims, layout.rows, device.core(), stream));
        ms[4] += timer.stopMs(stream);
    }
    std::printf("  stages (ms): conv+gates %.3f, conv state %.3f, WY transform %.3f, "
                "recurrence %.3f, gated norm %.3f\n",
        ms[0] / kRounds, ms[1] / kRounds, ms[2] / kRounds, ms[3] / kRounds, ms[4] / kRounds);
}

void benchPrefill(int tokens, cudaStream_t stream)
{
    const DeltaNetShape shape = qwenShape();
    DeviceDeltaNet device(randomLayer(shape, 1, 7));
    CHECK(device.upload(randomStep(shape, { tokens }, { 0 }, 8)));
    Timer timer;
    for (int pipeline : { 0, 1 })
        for (int columns : { 16, 32 }) {
            dn::Tuning tuning;
            tuning.chunkColumns = columns;
            tuning.chunkPipeline = pipeline;
            CHECK(device.enqueue(stream, tuning));
            constexpr int kRounds = 10;
            timer.start(stream);
            for (int r = 0; r < kRounds; ++r)
                CHECK(device.enqueue(stream, tuning));
            const double ms = timer.stopMs(stream) / kRounds;
            std::printf("prefill %5d tokens columns %d %s: %8.3f ms/layer, %8.2f ms for %d "
                        "layers, %.0f tokens/s\n",
                tokens, columns, pipeline ? "pipelined" : "plain    ", ms, ms * kLayers, kLayers,
                tokens / (ms * kLayers * 1e-3));
        }
    {
        CHECK(device.enqueue(stream, dn::Tuning {}));
        constexpr int kRounds = 10;
        timer.start(stream);
        for (int r = 0; r < kRounds; ++r)
            CHECK(device.enqueue(stream, dn::Tuning {}));
        const double ms = timer.stopMs(stream) / kRounds;
        std::printf("prefill %5d tokens default: %8.3f ms/layer, %8.2f ms for %d layers\n", tokens,
            ms, ms * kLayers, kLayers);
    }
    benchPrefillStages(device, shape, stream);
}

} // namespace

int main()
{
    cudaDeviceProp prop {};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    benchDecode(1, stream);
    benchDecode(32, stream);
    benchPrefill(512, stream);
    benchPrefill(8192, stream);
    CHECK(cudaStreamDestroy(stream));
    return 0;
}
