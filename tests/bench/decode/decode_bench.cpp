// decode_bench MODEL [--prompt N] [--decode N] [--threads N] [--float-products]: the CPU engine's
// speed on a model
// (typically `clausewright-cli synth --preset qwen3-30b-a3b --quant q4_k_m`), everything the
// issue's speed note needs from one run:
//  - this machine's memory read bandwidth (all threads summing a 1 GiB buffer),
//  - the bytes of weights one decoded token reads (dense tensors plus top-k of the experts),
//  - prompt processing of an N-token prompt (default 512) in tokens/s,
//  - greedy decoding of N tokens (default 32) in tokens/s, per-token times, the weight bytes
//    per second that rate means and its ratio to the measured bandwidth,
//  - for both phases: CPU time of the process (getrusage; on a machine shared with other work
//    CPU time per token is steadier than wall time), page faults, and the wall time per part
//    of the forward pass (the engine's step timers).
// --float-products turns off the integer (Q8_K activation) products, for comparison.
// Prints figures; not a test.
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "kernels/cpu/thread_pool.h"

#include <sys/resource.h>

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

struct Usage {
    double wall = 0, user = 0, system = 0;
    long minorFaults = 0, majorFaults = 0;
};

Usage usageNow()
{
    rusage r {};
    getrusage(RUSAGE_SELF, &r);
    Usage u;
    u.wall = now();
    u.user = double(r.ru_utime.tv_sec) + 1e-6 * double(r.ru_utime.tv_usec);
    u.system = double(r.ru_stime.tv_sec) + 1e-6 * double(r.ru_stime.tv_usec);
    u.minorFaults = r.ru_minflt;
    u.majorFaults = r.ru_majflt;
    return u;
}

void printUsage(const char* phase, const Usage& a, const Usage& b, int tokens)
{
    const double wall = b.wall - a.wall, user = b.user - a.user, sys = b.system - a.system;
    std::printf("  %s CPU time: user %.2f s + system %.2f s = %.3f s per token; %.0f %% of "
                "one core busy; page faults %ld minor, %ld major\n",
        phase, user, sys, (user + sys) / tokens, 100.0 * (user + sys) / wall,
        b.minorFaults - a.minorFaults, b.majorFaults - a.majorFaults);
}

void printParts(const cw::engine::StepTimers& t, int tokens)
{
    const double total = t.total();
    for (std::size_t i = 0; i < t.seconds.size(); ++i) {
        if (t.seconds[i] <= 0.0)
            continue;
        std::printf("    %-26s %9.2f ms/token  %5.1f %%\n",
            cw::engine::stepPartName(cw::engine::StepPart(i)), 1e3 * t.seconds[i] / tokens,
            100.0 * t.seconds[i] / total);
    }
}

double measureBandwidth(cw::kernels::ThreadPool& pool)
{
    const std::size_t n = (std::size_t(1) << 30) / sizeof(float);
    std::unique_ptr<float[]> buffer(new float[n]);
    const std::int64_t parts = pool.size();
    pool.parallelFor(
        parts,
        [&](std::int64_t b, std::int64_t e) {
            for (std::size_t i = n * std::size_t(b) / std::size_t(parts);
                 i < n * std::size_t(e) / std::size_t(parts); ++i)
                buffer[i] = float(i & 7);
        },
        1);
    double best = 0.0;
    std::vector<double> sums(std::size_t(parts), 0.0);
    for (int rep = 0; rep < 8; ++rep) {
        const double t0 = now();
        pool.parallelFor(
            parts,
            [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t p = b; p < e; ++p) {
                    float acc[8] = {};
                    const std::size_t lo = n * std::size_t(p) / std::size_t(parts);
                    const std::size_t hi = n * std::size_t(p + 1) / std::size_t(parts);
                    for (std::size_t i = lo; i + 8 <= hi; i += 8)
                        for (std::size_t j = 0; j < 8; ++j)
                            acc[j] += buffer[i + j];
                    double s = 0;
                    for (float a : acc)
                        s += a;
                    sums[std::size_t(p)] += s;
                }
            },
            1);
        const double dt = now() - t0;
        best = std::max(best, double(n * sizeof(float)) / dt / 1e9);
    }
    if (sums[0] < 0)
        std::printf("impossible\n");
    return best;
}

// Read bandwidth over the model's own memory-mapped weights (4 KB file pages, as the engine
// reads them; the 1 GiB buffer above may sit in huge pages): the expert stacks, up to 2 GB,
// after one pass to bring them into memory.
double measureMappedBandwidth(const cw::engine::ModelDescription& d, cw::kernels::ThreadPool& pool)
{
    std::vector<std::pair<const std::uint64_t*, std::size_t>> ranges; // words
    std::size_t total = 0;
    for (const auto& [name, view] : d.tensors) {
        if (name.find("_exps") == std::string::npos || !view.slices.empty()
            || total >= (std::size_t(2) << 30))
            continue;
        const std::size_t words = std::size_t(view.bytes) / 8;
        ranges.push_back({ reinterpret_cast<const std::uint64_t*>(view.data), words });
        total += words * 8;
    }
    if (ranges.empty())
        return 0.0;
    std::vector<std::uint64_t> sums(ranges.size(), 0);
    double best = 0.0;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now();
        pool.parallelFor(
            std::int64_t(ranges.size()),
            [&](std::int64_t b, std::int64_t e) {
                for (std::int64_t i = b; i < e; ++i) {
                    const auto [p, n] = ranges[std::size_t(i)];
                    std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                    for (std::size_t k = 0; k + 4 <= n; k += 4) {
                        s0 += p[k];
                        s1 += p[k + 1];
                        s2 += p[k + 2];
                        s3 += p[k + 3];
                    }
                    sums[std::size_t(i)] += s0 + s1 + s2 + s3;
                }
            },
            1);
        if (rep > 0)
            best = std::max(best, double(total) / (now() - t0) / 1e9);
    }
    if (sums[0] == 42)
        std::printf(" ");
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
        std::fprintf(stderr,
            "usage: decode_bench MODEL [--prompt N] [--decode N] [--threads N] [--float-products]\n");
        return 2;
    }
    int promptTokens = 512, decodeTokens = 32, threads = 0;
    bool floatProducts = false;
    for (int i = 2; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--float-products")) {
            floatProducts = true;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s needs a value\n", argv[i]);
            return 2;
        }
        if (!std::strcmp(argv[i], "--prompt"))
            promptTokens = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--decode"))
            decodeTokens = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--threads"))
            threads = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
        ++i;
    }
    if (promptTokens < 1 || decodeTokens < 1) {
        std::fprintf(stderr, "--prompt and --decode need at least 1 token\n");
        return 2;
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
    options.integerProducts = !floatProducts;
    auto model = cw::engine::Model::create(std::move(*description), options);
    if (!model) {
        std::fprintf(stderr, "%s\n", model.error().message.c_str());
        return 1;
    }
    auto& m = **model;
    cw::kernels::ThreadPool pool(threads); // the bandwidth probes' own, as many as the model's
    const double bandwidth = measureBandwidth(pool);
    std::printf("threads: %d; products: %s\nmemory read bandwidth: %.2f GB/s\n", pool.size(),
        floatProducts ? "float activations" : "integer (activations as Q8_K) for k-quants", bandwidth);
    const double mapped = measureMappedBandwidth(m.description(), pool);
    std::printf("read bandwidth over the mapped expert weights: %.2f GB/s (bound %.2f tokens/s)\n",
        mapped, mapped * 1e9 / perToken);
    std::printf("weights read per decoded token: %.3f GB\n", perToken / 1e9);

    std::vector<std::int32_t> prompt(static_cast<std::size_t>(promptTokens));
    for (int i = 0; i < promptTokens; ++i)
        prompt[std::size_t(i)]
            = std::int32_t((i * 7919 + 13) % std::max<std::int64_t>(m.vocabSize() - 1, 1));
    // The file is memory-mapped: a first pass of 64 tokens (512 expert choices per layer, so
    // nearly every expert) brings the weights into the page cache and this process's page
    // tables, so the prompt figure is the steady state rather than the first touch of 17 GB.
    {
        auto warm = m.newSequence();
        std::vector<std::int32_t> ids(64);
        for (std::size_t i = 0; i < ids.size(); ++i)
            ids[i] = std::int32_t((i * 104729 + 7) % std::size_t(std::max<std::int64_t>(m.vocabSize() - 1, 1)));
        const Usage w0 = usageNow();
        (void)m.prefill(*warm, ids);
        const Usage w1 = usageNow();
        std::printf("warm-up prefill of %zu tokens: %.2f s\n", ids.size(), w1.wall - w0.wall);
        printUsage("warm-up", w0, w1, int(ids.size()));
    }
    auto seq = m.newSequence();
    m.resetStepTimers();
    Usage u0 = usageNow();
    auto logits = m.prefill(*seq, prompt);
    Usage u1 = usageNow();
    if (!logits) {
        std::fprintf(stderr, "%s\n", logits.error().message.c_str());
        return 1;
    }
    const double prefill = u1.wall - u0.wall;
    std::printf("prompt processing: %d tokens in %.2f s = %.2f tokens/s\n", promptTokens, prefill,
        promptTokens / prefill);
    printUsage("prompt", u0, u1, promptTokens);
    std::printf("  prompt time per part of the forward pass:\n");
    printParts(m.stepTimers(), promptTokens);

    m.resetStepTimers();
    std::vector<double> tokenSeconds;
    u0 = usageNow();
    for (int i = 0; i < decodeTokens; ++i) {
        const double t0 = now();
        const std::int32_t next
            = std::int32_t(std::max_element(logits->begin(), logits->end()) - logits->begin());
        const cw::engine::ForwardRequest r { seq.get(), std::span<const std::int32_t>(&next, 1),
            false };
        logits = m.step(std::span<const cw::engine::ForwardRequest>(&r, 1));
        if (!logits) {
            std::fprintf(stderr, "%s\n", logits.error().message.c_str());
            return 1;
        }
        tokenSeconds.push_back(now() - t0);
    }
    u1 = usageNow();
    const double decode = u1.wall - u0.wall;
    const double rate = decodeTokens / decode;
    // The higher of the two bandwidth figures: the ratio is then never flattered.
    const double bestBandwidth = std::max(bandwidth, mapped);
    const double bound = bestBandwidth * 1e9 / perToken;
    std::printf("decode: %d tokens in %.2f s = %.2f tokens/s\n", decodeTokens, decode, rate);
    std::sort(tokenSeconds.begin(), tokenSeconds.end());
    std::printf("  per token: fastest %.1f ms (%.2f tokens/s), median %.1f ms, slowest %.1f ms\n",
        1e3 * tokenSeconds.front(), 1.0 / tokenSeconds.front(),
        1e3 * tokenSeconds[tokenSeconds.size() / 2], 1e3 * tokenSeconds.back());
    printUsage("decode", u0, u1, decodeTokens);
    std::printf("  decode time per part of the forward pass:\n");
    printParts(m.stepTimers(), decodeTokens);
    std::printf("weights streamed while decoding: %.2f GB/s (%.2f GB/s at the fastest token)\n",
        perToken * rate / 1e9, perToken / tokenSeconds.front() / 1e9);
    std::printf("bandwidth bound (%.2f GB/s, the higher of the two): %.2f tokens/s; measured / "
                "bound = %.0f %% (fastest token %.0f %%, median token %.0f %%)\n",
        bestBandwidth, bound, 100.0 * rate / bound, 100.0 / tokenSeconds.front() / bound,
        100.0 / tokenSeconds[tokenSeconds.size() / 2] / bound);
    return 0;
}
