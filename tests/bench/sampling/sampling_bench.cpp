// Prints what choosing one token on the host costs at Qwen3.6's vocabulary (248,320 logits):
// the sampler alone per mode, and a step's rows chosen one after another or side by side on a
// thread pool as the request scheduler does (engine/generation/request_scheduler.cpp).
// Logits are drawn like a trained model's (normal, spread 3, a few strong candidates), so the
// top-p prefix is short as it is in practice.
//   bench_sampling [vocab (248320)] [tokens per mode (200)]
#include "engine/sampling/sampler.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace cw::sampling;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<float> trainedLikeLogits(std::size_t vocab, std::mt19937& rng)
{
    std::normal_distribution<float> spread(0.0f, 3.0f);
    std::vector<float> logits(vocab);
    for (float& l : logits)
        l = spread(rng);
    std::uniform_int_distribution<std::size_t> pick(0, vocab - 1);
    for (int i = 0; i < 5; ++i)
        logits[pick(rng)] = 18.0f - float(i);
    return logits;
}

struct Mode {
    const char* name;
    SamplingParams params;
};

} // namespace

int main(int argc, char** argv)
{
    const std::size_t vocab = argc > 1 ? std::size_t(std::atol(argv[1])) : 248320;
    const int tokens = argc > 2 ? std::max(1, std::atoi(argv[2])) : 200;
    std::mt19937 rng(7);
    std::vector<std::vector<float>> rows;
    for (int i = 0; i < 32; ++i)
        rows.push_back(trainedLikeLogits(vocab, rng));

    std::vector<Mode> modes;
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    modes.push_back({ "greedy (penalties or a grammar on)", greedy });
    SamplingParams t07;
    t07.temperature = 0.7f;
    modes.push_back({ "temperature 0.7", t07 });
    SamplingParams topP = t07;
    topP.topP = 0.95f;
    modes.push_back({ "temperature 0.7, top-p 0.95", topP });
    SamplingParams topK = t07;
    topK.topK = 40;
    modes.push_back({ "temperature 0.7, top-k 40", topK });
    SamplingParams all = topP;
    all.topK = 40;
    all.minP = 0.05f;
    all.repetitionPenalty = 1.1f;
    modes.push_back({ "top-k 40, top-p 0.95, min-p 0.05, repetition 1.1", all });

    std::printf("vocabulary %zu, %d tokens per mode, %u hardware threads\n", vocab, tokens,
        std::thread::hardware_concurrency());
    const std::vector<std::int32_t> prompt(512, 17);
    for (const Mode& m : modes) {
        Sampler sampler(m.params);
        const auto t0 = Clock::now();
        for (int i = 0; i < tokens; ++i)
            if (!sampler.sample(rows[std::size_t(i) % rows.size()], prompt, {}))
                return 1;
        const double perToken
            = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / tokens;
        std::printf("  %-52s %8.3f ms per token\n", m.name, perToken);
    }

    // A step of 32 sampled rows (temperature 0.7, top-p 0.95): one after another, then on the
    // scheduler's pool of up to 8 threads.
    const int threads = int(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    cw::kernels::ThreadPool pool(threads);
    std::vector<Sampler> samplers(32, Sampler(topP));
    const int steps = std::max(1, tokens / 32);
    for (const bool parallel : { false, true }) {
        const auto t0 = Clock::now();
        for (int s = 0; s < steps; ++s) {
            auto choose = [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t r = begin; r < end; ++r)
                    (void)samplers[std::size_t(r)].sample(rows[std::size_t(r)], prompt, {});
            };
            if (parallel)
                pool.parallelFor(32, choose);
            else
                choose(0, 32);
        }
        const double perStep
            = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps;
        std::printf("  step of 32 sampled rows, %-26s %8.3f ms per step\n",
            parallel ? ("side by side, " + std::to_string(threads) + " threads").c_str()
                     : "one after another",
            perStep);
    }
    return 0;
}
