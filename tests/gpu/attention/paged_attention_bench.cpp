// paged_attention_bench: decode attention time and GB/s of cache read at contexts 512, 8192
// and 28672 for batches of 1 and 32 (replayed from a captured CUDA graph, as the engine
// runs decode steps), and prefill attention TFLOP/s for one sequence of 8192 and 28672
// tokens (and of 700 and 8192 on the exact f32 path), for the Qwen3.6 and Qwen3 attention
// shapes. Prints figures; not a test.
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/paged_attention.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace cw::kernels::cuda;

void check(cudaError_t status, const char* what)
{
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

struct Shape {
    const char* name;
    int heads, kvHeads, headDim;
    bool gated;
};

// Device memory released at scope end.
struct Buffer {
    void* data = nullptr;
    explicit Buffer(std::size_t bytes, int fill = 0x3c) // 0x3c3c3c3c: 0.0115f
    {
        check(cudaMalloc(&data, std::max<std::size_t>(bytes, 16)), "cudaMalloc");
        check(cudaMemset(data, fill, bytes), "cudaMemset");
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { cudaFree(data); }
    float* f() const { return static_cast<float*>(data); }
    std::int32_t* i() const { return static_cast<std::int32_t*>(data); }
};

void upload(const Buffer& b, const std::vector<std::int32_t>& host)
{
    check(cudaMemcpy(b.data, host.data(), host.size() * 4, cudaMemcpyHostToDevice), "upload");
}

// A step of `seqs` sequences of `tokens` rows each after `pos0` cached positions, over a
// cache of shuffled 16-position blocks (one attention layer).
struct BenchStep {
    static constexpr int kBlockTokens = 16;
    Buffer rowSeq, rowPos, seqRow0, seqTokens, seqPos0, tables;
    StepLayout layout;

    BenchStep(int seqs, int pos0, int tokens)
        : rowSeq(std::size_t(seqs) * tokens * 4)
        , rowPos(std::size_t(seqs) * tokens * 4)
        , seqRow0(std::size_t(seqs) * 4)
        , seqTokens(std::size_t(seqs) * 4)
        , seqPos0(std::size_t(seqs) * 4)
        , tables(std::size_t(seqs) * ((pos0 + tokens + kBlockTokens - 1) / kBlockTokens) * 4)
    {
        const int context = pos0 + tokens;
        const int perSeq = (context + kBlockTokens - 1) / kBlockTokens;
        std::vector<std::int32_t> hRowSeq, hRowPos, hRow0, hTokens, hPos0;
        for (int s = 0; s < seqs; ++s) {
            hRow0.push_back(s * tokens);
            hTokens.push_back(tokens);
            hPos0.push_back(pos0);
            for (int i = 0; i < tokens; ++i) {
                hRowSeq.push_back(s);
                hRowPos.push_back(pos0 + i);
            }
        }
        std::vector<std::int32_t> ids(std::size_t(seqs) * perSeq);
        std::iota(ids.begin(), ids.end(), 0);
        std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
        upload(rowSeq, hRowSeq);
        upload(rowPos, hRowPos);
        upload(seqRow0, hRow0);
        upload(seqTokens, hTokens);
        upload(seqPos0, hPos0);
        upload(tables, ids);
        layout.rows = seqs * tokens;
        layout.sequences = seqs;
        layout.maxTokensPerSequence = tokens;
        layout.maxContext = context;
        layout.blocksPerSequence = perSeq;
        layout.tokens = rowSeq.i();
        layout.rowSeq = rowSeq.i();
        layout.rowPos = rowPos.i();
        layout.seqRow0 = seqRow0.i();
        layout.seqTokens = seqTokens.i();
        layout.seqPos0 = seqPos0.i();
        layout.blockTables = tables.i();
        layout.stateSlots = seqRow0.i();
    }
    std::size_t blocks() const { return std::size_t(layout.sequences) * layout.blocksPerSequence; }
};

AttentionShape attentionShape(const Shape& s)
{
    AttentionShape a;
    a.heads = s.heads;
    a.kvHeads = s.kvHeads;
    a.headDim = s.headDim;
    a.ropeDim = s.headDim;
    a.gated = s.gated;
    return a;
}

struct Timing {
    cudaEvent_t start, stop;
    Timing()
    {
        check(cudaEventCreate(&start), "event");
        check(cudaEventCreate(&stop), "event");
    }
    ~Timing()
    {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    float ms() const
    {
        float t = 0.0f;
        check(cudaEventSynchronize(stop), "sync");
        check(cudaEventElapsedTime(&t, start, stop), "elapsed");
        return t;
    }
};

std::vector<std::string> g_summary;

void decodeFigure(const Shape& shape, int batch, int context, bool staged, cudaStream_t stream)
{
    cw::kernels::cuda::attention_detail::useStagedDecode(staged);
    BenchStep step(batch, context - 1, 1);
    const AttentionShape a = attentionShape(shape);
    const int kvWidth = shape.kvHeads * shape.headDim;
    const std::size_t cacheFloats
        = step.blocks() * 2 * BenchStep::kBlockTokens * std::size_t(kvWidth);
    Buffer cache(cacheFloats * 4), q(std::size_t(batch) * shape.heads * shape.headDim * 4),
        qAll(std::size_t(batch) * shape.heads * 2 * shape.headDim * 4),
        out(std::size_t(batch) * shape.heads * shape.headDim * 4);
    const std::size_t scratchBytes = pagedAttentionScratchBytes(a, step.layout);
    Buffer scratch(scratchBytes, 0);
    const PagedKv kv { cache.f(), 1, BenchStep::kBlockTokens, kvWidth };
    const float scale = 1.0f / 16.0f;
    check(cudaDeviceSynchronize(), "setup");
    auto run = [&] {
        check(pagedAttention(q.f(), shape.gated ? qAll.f() + shape.headDim : nullptr,
                  2 * shape.heads * shape.headDim, a, scale, step.layout, kv, 0, out.f(),
                  { static_cast<std::byte*>(scratch.data), scratchBytes }, stream),
            "pagedAttention");
    };
    for (int i = 0; i < 3; ++i)
        run();
    check(cudaStreamSynchronize(stream), "warm-up");
    const int reps = context >= 8192 ? 50 : 200;
    Timing direct;
    check(cudaEventRecord(direct.start, stream), "record");
    for (int i = 0; i < reps; ++i)
        run();
    check(cudaEventRecord(direct.stop, stream), "record");
    const double directUs = 1e3 * direct.ms() / reps;

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
    run();
    check(cudaStreamEndCapture(stream, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    check(cudaGraphLaunch(exec, stream), "graph launch");
    Timing replay;
    check(cudaEventRecord(replay.start, stream), "record");
    for (int i = 0; i < reps; ++i)
        check(cudaGraphLaunch(exec, stream), "graph launch");
    check(cudaEventRecord(replay.stop, stream), "record");
    const double graphUs = 1e3 * replay.ms() / reps;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);

    const double bytes = double(batch) * context * 2.0 * kvWidth * 4.0;
    char line[200];
    std::snprintf(line, sizeof line,
        "decode  %-8s %-9s batch %2d ctx %5d: %8.1f us (graph) %8.1f us (launches), %6.0f GB/s of "
        "cache",
        shape.name, staged ? "staged" : "registers", batch, context, graphUs, directUs,
        bytes / (graphUs * 1e-6) / 1e9);
    std::puts(line);
    g_summary.push_back(line);
}

void prefillFigure(
    const Shape& shape, int tokens, int blocksPerSm, cudaStream_t stream, bool exact = false)
{
    cw::kernels::cuda::attention_detail::usePrefillBlocksPerSm(blocksPerSm);
    BenchStep step(1, 0, tokens);
    AttentionShape a = attentionShape(shape);
    a.exactPrefill = exact;
    const int kvWidth = shape.kvHeads * shape.headDim;
    const std::size_t cacheFloats
        = step.blocks() * 2 * BenchStep::kBlockTokens * std::size_t(kvWidth);
    const std::size_t rowFloats = std::size_t(tokens) * shape.heads * shape.headDim;
    Buffer cache(cacheFloats * 4), q(rowFloats * 4), qAll(rowFloats * 2 * 4), out(rowFloats * 4);
    const std::size_t scratchBytes = pagedAttentionScratchBytes(a, step.layout);
    Buffer scratch(scratchBytes, 0);
    const PagedKv kv { cache.f(), 1, BenchStep::kBlockTokens, kvWidth };
    check(cudaDeviceSynchronize(), "setup");
    auto run = [&] {
        check(pagedAttention(q.f(), shape.gated ? qAll.f() + shape.headDim : nullptr,
                  2 * shape.heads * shape.headDim, a, 0.0625f, step.layout, kv, 0, out.f(),
                  { static_cast<std::byte*>(scratch.data), scratchBytes }, stream),
            "pagedAttention");
    };
    run();
    check(cudaStreamSynchronize(stream), "warm-up");
    const int reps = 3;
    Timing t;
    check(cudaEventRecord(t.start, stream), "record");
    for (int i = 0; i < reps; ++i)
        run();
    check(cudaEventRecord(t.stop, stream), "record");
    const double ms = t.ms() / reps;
    // Causal: query i sees i + 1 keys; 2 FLOP per multiply-add, QK^T and PV.
    const double flop = 4.0 * shape.headDim * shape.heads * (double(tokens) * (tokens + 1) / 2.0);
    const char* kind = exact ? "exact" : blocksPerSm == 1 ? "1 blk/SM" : "default";
    char line[200];
    std::snprintf(line, sizeof line,
        "prefill %-8s %-8s tokens %5d: %8.2f ms, %6.1f TFLOP/s effective (%.2f TFLOP; staging %zu "
        "MB)",
        shape.name, kind, tokens, ms, flop / (ms * 1e-3) / 1e12, flop / 1e12, scratchBytes >> 20);
    std::puts(line);
    g_summary.push_back(line);
}

} // namespace

int main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // figures in order with any error, line by line
    int device = 0;
    cudaDeviceProp prop {};
    check(cudaGetDevice(&device), "device");
    check(cudaGetDeviceProperties(&prop, device), "properties");
    std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t stream;
    // A blocking stream: ordered after the setup copies and fills on the legacy stream.
    check(cudaStreamCreate(&stream), "stream");
    const Shape shapes[] = { { "qwen3.6", 16, 2, 256, true }, { "qwen3", 32, 4, 128, false } };
    for (const auto& shape : shapes) {
        for (const bool staged : { true, false })
            for (const int batch : { 1, 32 })
                for (const int context : { 512, 8192, 28672 })
                    decodeFigure(shape, batch, context, staged, stream);
        // Head dim 256 runs one block per multiprocessor either way.
        for (const int blocks : { 0, 1 })
            if (blocks == 0 || shape.headDim <= 128)
                for (const int tokens : { 8192, 28672 })
                    prefillFigure(shape, tokens, blocks, stream);
        for (const int tokens : { 700, 8192 })
            prefillFigure(shape, tokens, 0, stream, true);
    }
    std::fflush(stdout);
    std::puts("---- summary");
    for (const auto& line : g_summary)
        std::puts(line.c_str());
    cudaStreamDestroy(stream);
    return 0;
}
