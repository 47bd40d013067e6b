// decode_bench MODEL [--prompt N] [--decode N] [--threads N]: the CPU engine's speed on a model
// (typically `clausewright-cli synth --preset qwen3-30b-a3b --quant q4_k_m`):
//  - this machine's memory read bandwidth (all threads summing a 1 GiB buffer),
//  - prompt processing of an N-token prompt (default 512) in tokens/s,
//  - greedy decoding of N tokens (default 32) in tokens/s,
//  - the bytes of weights one decoded token reads (dense tensors plus top-k of the experts)
//    and the ratio of the measured decode rate to what the bandwidth allows.
// Prints figures; not a test.
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double measureBandwidth(cw::kernels::ThreadPool& pool)
{
    const std::size_t n = (std::size_t(1) << 30) / sizeof(float);
    std::unique_ptr<float[]> buffer(new float[n]);
    pool.parallelFor(std::int64_t(n), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
            buffer[std::size_t(i)] = float(i & 7);
    });
    double best = 0.0;
    for (int rep = 0; rep < 5; ++rep) {
        std::vector<double> sums(64, 0.0);
        const double t0 = now();
        pool.parallelFor(
            std::int64_t(n),
            [&](std::int64_t b, std::int64_t e) {
                float acc[8] = {};
                for (std::int64_t i = b; i + 8 <= e; i += 8)
                    for (int j = 0; j < 8; ++j)
                        acc[j] += buffer[std::size_t(i + j)];
                double s = 0;
                for (float a : acc)
                    s += a;
                sums[std::size_t(b * 63 / std::int64_t(n))] += s;
            },
            std::int64_t(n) / pool.size());
        const double dt = now() - t0;
        best = std::max(best, double(n * sizeof(float)) / dt / 1e9);
        if (sums[0] < 0)
            std::printf("impossible\n");
    }
    return best;
}

double bytesPerToken(const cw::engine::ModelDescription& d)
{
    const auto& hp = d.hparams;
    double bytes = 0.0;
    for (const auto& [name, view] : d.tensors) {
        if (name.rfind("blk.", 0) != 0)
            continue; // embedding rows are one row per token; lm_head counted below
        long long layer = -1;
        std::sscanf(name.c_str(), "blk.%lld.", &layer);
        if (layer >= hp.numLayers)
            continue; // MTP block is not run
        if (name.find("_exps") != std::string::npos)
            bytes += double(view.bytes) * double(hp.numExpertsPerToken) / double(hp.numExperts);
        else
            bytes += double(view.bytes);
    }
    const auto* out = d.find("output.weight");
    bytes += double(out ? out->bytes : d.get("token_embd.weight").bytes);
    return bytes;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: decode_bench MODEL [--prompt N] [--decode N] [--threads N]\n");
        return 2;
    }
    int promptTokens = 512, decodeTokens = 32, threads = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--prompt"))
            promptTokens = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--decode"))
            decodeTokens = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--threads"))
            threads = std::atoi(argv[i + 1]);
    }
    auto description = cw::engine::openModel(argv[1]);
    if (!description) {
        std::fprintf(stderr, "%s\n", description.error().message.c_str());
        return 1;
    }
    const double perToken = bytesPerToken(*description);
    cw::engine::ModelOptions options;
    options.threads = threads;
    options.prefillChunk = 512;
    auto model = cw::engine::Model::create(std::move(*description), options);
    if (!model) {
        std::fprintf(stderr, "%s\n", model.error().message.c_str());
        return 1;
    }
    auto& m = **model;
    const double bandwidth = measureBandwidth(m.threads());
    std::printf("threads: %d\nmemory read bandwidth: %.2f GB/s\n", m.threads().size(), bandwidth);
    std::printf("weights read per decoded token: %.3f GB\n", perToken / 1e9);

    std::vector<std::int32_t> prompt(static_cast<std::size_t>(promptTokens));
    for (int i = 0; i < promptTokens; ++i)
        prompt[std::size_t(i)]
            = std::int32_t((i * 7919 + 13) % std::max<std::int64_t>(m.vocabSize() - 1, 1));
    // Warm the page cache with a short run first (the file is memory-mapped).
    {
        auto warm = m.newSequence();
        const std::vector<std::int32_t> one { 1, 2 };
        (void)m.prefill(*warm, one);
    }
    auto seq = m.newSequence();
    double t0 = now();
    auto logits = m.prefill(*seq, prompt);
    const double prefill = now() - t0;
    if (!logits) {
        std::fprintf(stderr, "%s\n", logits.error().message.c_str());
        return 1;
    }
    std::printf("prompt processing: %d tokens in %.2f s = %.2f tokens/s\n", promptTokens, prefill,
        promptTokens / prefill);
    t0 = now();
    for (int i = 0; i < decodeTokens; ++i) {
        const std::int32_t next
            = std::int32_t(std::max_element(logits->begin(), logits->end()) - logits->begin());
        const cw::engine::ForwardRequest r { seq.get(), std::span<const std::int32_t>(&next, 1),
            false };
        logits = m.step(std::span<const cw::engine::ForwardRequest>(&r, 1));
        if (!logits) {
            std::fprintf(stderr, "%s\n", logits.error().message.c_str());
            return 1;
        }
    }
    const double decode = now() - t0;
    const double rate = decodeTokens / decode;
    const double bound = bandwidth * 1e9 / perToken;
    std::printf("decode: %d tokens in %.2f s = %.2f tokens/s\n", decodeTokens, decode, rate);
    std::printf("bandwidth bound: %.2f tokens/s; measured / bound = %.0f %%\n", bound,
        100.0 * rate / bound);
    return 0;
}
