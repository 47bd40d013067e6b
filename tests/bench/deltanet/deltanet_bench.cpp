// The DeltaNet core's recurrence at Qwen3.5/3.6-35B-A3B's shapes: 16 key heads and 32 value
// heads of dk = dv = 128, q/k/v rows laid out as the engine's convolution output (row stride
// 2 * 16 * 128 + 32 * 128 floats), chunks of 64 tokens.
//   deltanet_bench [--benchmark_filter=...] [--benchmark_repetitions=N]
// Prompt: gatedDeltaRuleChunked over T tokens (256 is the CPU engine's prefill step, 512 and
// 4096 whole prompts), one head on one thread and the 32 heads over the thread pool as
// cpu_layers.cpp runs them. Decode: gatedDeltaRuleRecurrent for one token; the 32-head case
// cycles through 30 layers' states (60 MB) so that they come from memory, as in a decode step.
// Each case runs on every kernel path the CPU has (portable, avx2, avx512). The counter
// part_per_token is what the decode_bench table's "DeltaNet core" row would get from this
// kernel alone in a model of 30 DeltaNet layers: time per call * 30 / T (for one head, times
// 32 heads; one head is timed in CPU time, the pool in wall time). For the pool, "CPU" is the
// whole process's CPU time (all threads' work, idle spinning included): on a shared machine
// it says more than the wall time, which waits for descheduled workers.
// conv/*: causalConv1dSilu over the layer's 8192 channels (kernel 4), T = 1, 256 and 512 rows
// of the q/k/v projection (row stride 8192), cycling through 30 layers' weights and conv
// states; on one thread, and over the pool in blocks of kConvBlock channels as cpu_layers.cpp
// runs it. gated_norm/*: gatedRmsNorm of the core's output, T * 32 rows of 128 (one thread).
// part_per_token for these is time per call * 30 / T, already the whole layer.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

namespace ops = cw::kernels::ops;
namespace quant = cw::kernels::quant;

constexpr std::int64_t kKeyHeads = 16, kValueHeads = 32, kDk = 128, kDv = 128, kLayers = 30;
constexpr std::int64_t kConvDim = 2 * kKeyHeads * kDk + kValueHeads * kDv;
constexpr std::int64_t kValueDim = kValueHeads * kDv;
constexpr int kConvKernel = 4;
constexpr std::int64_t kConvBlock = 512; // channels a pool job (cpu_layers.cpp)

// One DeltaNet layer's inputs for T tokens, as deltaNetLayer hands them to the kernels.
struct LayerInputs {
    std::int64_t tokens = 0;
    std::vector<float> conv, g, beta; // g, beta: [head][token]
    std::vector<float> out;

    explicit LayerInputs(std::int64_t t)
        : tokens(t)
        , conv(std::size_t(t * kConvDim))
        , g(std::size_t(kValueHeads * t))
        , beta(std::size_t(kValueHeads * t))
        , out(std::size_t(t * kValueDim))
    {
        std::mt19937 rng(11);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_real_distribution<float> u(-3.0f, 1.0f);
        for (auto& x : conv)
            x = normal(rng);
        for (std::int64_t i = 0; i < t; ++i)
            for (std::int64_t h = 0; h < 2 * kKeyHeads; ++h)
                ops::l2Normalize(conv.data() + i * kConvDim + h * kDk, kDk, 1e-6f);
        for (std::size_t i = 0; i < g.size(); ++i) {
            g[i] = -std::exp(u(rng)) * ops::softplus(u(rng));
            beta[i] = ops::sigmoid(2.0f * u(rng));
        }
    }

    const float* q(std::int64_t head) const { return conv.data() + (head % kKeyHeads) * kDk; }
    const float* k(std::int64_t head) const
    {
        return conv.data() + kKeyHeads * kDk + (head % kKeyHeads) * kDk;
    }
    const float* v(std::int64_t head) const
    {
        return conv.data() + 2 * kKeyHeads * kDk + head * kDv;
    }
};

std::vector<float> randomStates(std::int64_t count)
{
    std::mt19937 rng(12);
    std::normal_distribution<float> normal(0.0f, 0.3f);
    std::vector<float> s(std::size_t(count * kDk * kDv));
    for (auto& x : s)
        x = normal(rng);
    return s;
}

void runHead(LayerInputs& in, std::int64_t head, float* state)
{
    const std::int64_t t = in.tokens;
    const float* g = in.g.data() + head * t;
    const float* beta = in.beta.data() + head * t;
    float* out = in.out.data() + head * kDv;
    if (t == 1)
        ops::gatedDeltaRuleRecurrent(in.q(head), in.k(head), kConvDim, in.v(head), kConvDim, g,
            beta, t, kDk, kDv, state, out, kValueDim);
    else
        ops::gatedDeltaRuleChunked(in.q(head), in.k(head), kConvDim, in.v(head), kConvDim, g, beta,
            t, kDk, kDv, state, out, kValueDim);
}

void setCounters(benchmark::State& state, std::int64_t tokens, std::int64_t heads)
{
    state.counters["part_per_token"]
        = benchmark::Counter(double(tokens) / double(kLayers) * double(heads) / double(kValueHeads),
            benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.counters["tokens_per_s"]
        = benchmark::Counter(double(tokens), benchmark::Counter::kIsIterationInvariantRate);
}

// One value head on the calling thread. part_per_token scales it to 32 heads on one core.
void oneHead(benchmark::State& state, quant::CpuKernelPath path)
{
    quant::setCpuKernelPath(path);
    const std::int64_t t = state.range(0);
    LayerInputs in(t);
    std::vector<float> s = randomStates(1);
    for (auto _ : state) {
        runHead(in, 0, s.data());
        benchmark::DoNotOptimize(in.out.data());
        benchmark::ClobberMemory();
    }
    setCounters(state, t, 1);
}

// The 32 value heads of one layer over the pool, a job per head (cpu_layers.cpp). With T = 1
// each call works on the next of 30 layers' states.
void allHeads(benchmark::State& state, quant::CpuKernelPath path)
{
    static cw::kernels::ThreadPool pool;
    quant::setCpuKernelPath(path);
    const std::int64_t t = state.range(0);
    LayerInputs in(t);
    const std::int64_t layers = t == 1 ? kLayers : 1;
    std::vector<float> s = randomStates(layers * kValueHeads);
    std::int64_t layer = 0;
    for (auto _ : state) {
        float* layerState = s.data() + layer * kValueHeads * kDk * kDv;
        pool.parallelFor(kValueHeads, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t h = begin; h < end; ++h)
                runHead(in, h, layerState + h * kDk * kDv);
        });
        layer = (layer + 1) % layers;
        benchmark::DoNotOptimize(in.out.data());
        benchmark::ClobberMemory();
    }
    setCounters(state, t, kValueHeads);
    state.counters["threads"] = double(pool.size());
}

// 30 layers' convolution weights and states, and one step's projection rows.
struct ConvInputs {
    std::int64_t tokens = 0;
    std::vector<float> in, out, weights, states;

    explicit ConvInputs(std::int64_t t)
        : tokens(t)
        , in(std::size_t(t * kConvDim))
        , out(std::size_t(t * kConvDim))
        , weights(std::size_t(kLayers * kConvDim * kConvKernel))
        , states(std::size_t(kLayers * kConvDim * (kConvKernel - 1)))
    {
        std::mt19937 rng(13);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (auto* v : { &in, &weights, &states })
            for (auto& x : *v)
                x = normal(rng);
    }

    void run(std::int64_t layer, std::int64_t c0, std::int64_t c1)
    {
        ops::causalConv1dSilu(in.data() + c0, kConvDim, tokens, c1 - c0,
            weights.data() + (layer * kConvDim + c0) * kConvKernel, kConvKernel,
            states.data() + (layer * kConvDim + c0) * (kConvKernel - 1), out.data() + c0, kConvDim);
    }
};

void convOneThread(benchmark::State& state, quant::CpuKernelPath path)
{
    quant::setCpuKernelPath(path);
    ConvInputs in(state.range(0));
    std::int64_t layer = 0;
    for (auto _ : state) {
        in.run(layer, 0, kConvDim);
        layer = (layer + 1) % kLayers;
        benchmark::DoNotOptimize(in.out.data());
        benchmark::ClobberMemory();
    }
    setCounters(state, in.tokens, kValueHeads);
}

void convPool(benchmark::State& state, quant::CpuKernelPath path)
{
    static cw::kernels::ThreadPool pool;
    quant::setCpuKernelPath(path);
    ConvInputs in(state.range(0));
    std::int64_t layer = 0;
    const std::int64_t blocks = (kConvDim + kConvBlock - 1) / kConvBlock;
    for (auto _ : state) {
        pool.parallelFor(blocks, [&](std::int64_t b0, std::int64_t b1) {
            in.run(layer, b0 * kConvBlock, std::min(kConvDim, b1 * kConvBlock));
        });
        layer = (layer + 1) % kLayers;
        benchmark::DoNotOptimize(in.out.data());
        benchmark::ClobberMemory();
    }
    setCounters(state, in.tokens, kValueHeads);
    state.counters["threads"] = double(pool.size());
}

void gatedNorm(benchmark::State& state, quant::CpuKernelPath path)
{
    quant::setCpuKernelPath(path);
    const std::int64_t t = state.range(0), rows = t * kValueHeads;
    std::mt19937 rng(14);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(std::size_t(rows * kDv)), gate(x.size()), w(static_cast<std::size_t>(kDv));
    for (auto* v : { &x, &gate, &w })
        for (auto& e : *v)
            e = normal(rng);
    const std::vector<float> x0 = x;
    for (auto _ : state) {
        ops::gatedRmsNorm(x.data(), gate.data(), rows, kDv, w.data(), 1e-6f);
        benchmark::DoNotOptimize(x.data());
        benchmark::ClobberMemory();
        state.PauseTiming();
        std::copy(x0.begin(), x0.end(), x.begin()); // keep the values from shrinking to 0
        state.ResumeTiming();
    }
    setCounters(state, t, kValueHeads);
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::pair<quant::CpuKernelPath, std::string>> paths {
        { quant::CpuKernelPath::Portable, "portable" }
    };
    if (quant::cpuSupportsAvx2())
        paths.push_back({ quant::CpuKernelPath::Avx2, "avx2" });
    if (quant::cpuSupportsAvx512())
        paths.push_back({ quant::CpuKernelPath::Avx512, "avx512" });
    for (const auto& [path, name] : paths) {
        benchmark::RegisterBenchmark(("conv/one_thread/" + name).c_str(), convOneThread, path)
            ->ArgName("T")
            ->Arg(1)
            ->Arg(256)
            ->Arg(512)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("conv/pool/" + name).c_str(), convPool, path)
            ->ArgName("T")
            ->Arg(1)
            ->Arg(256)
            ->Arg(512)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime()
            ->MeasureProcessCPUTime();
        benchmark::RegisterBenchmark(("gated_norm/one_thread/" + name).c_str(), gatedNorm, path)
            ->ArgName("T")
            ->Arg(1)
            ->Arg(256)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("prompt/one_head/" + name).c_str(), oneHead, path)
            ->ArgName("T")
            ->Arg(256)
            ->Arg(512)
            ->Arg(4096)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("prompt/32_heads/" + name).c_str(), allHeads, path)
            ->ArgName("T")
            ->Arg(256)
            ->Arg(512)
            ->Arg(4096)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->MeasureProcessCPUTime();
        benchmark::RegisterBenchmark(("decode/one_head/" + name).c_str(), oneHead, path)
            ->ArgName("T")
            ->Arg(1)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("decode/32_heads/" + name).c_str(), allHeads, path)
            ->ArgName("T")
            ->Arg(1)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime()
            ->MeasureProcessCPUTime();
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
