// `clausewright-cli bench --model PATH --device cuda|cpu --prompt-tokens N --gen-tokens M
// --batch B [--repeat R]`: prefill and decode speed of the engine, one JSON object per run.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "engine/model_files/hf_gguf_layout.h"
#include "engine/model_files/model_loader.h"
#include "engine/model_files/model_presets.h"
#include "engine/runtime/model.h"
#include "engine/runtime/precision.h"
#include "kernels/compute_devices.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/switches/cuda_switches.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sys/resource.h>

#ifndef CW_GIT_COMMIT
#define CW_GIT_COMMIT "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from)
{
    return std::chrono::duration<double>(Clock::now() - from).count();
}

// The preset name when the file is one of ours ("qwen3.6-35b-a3b (random weights)"), else the
// file's general.name with the architecture.
std::string modelName(const cw::engine::ModelDescription& d)
{
    for (const auto& preset : cw::engine::modelPresets())
        if (d.name.rfind(preset.name, 0) == 0)
            return preset.name;
    const auto arch = d.metadata.find("general.architecture");
    return d.name + (arch != d.metadata.end() ? " (" + arch->second + ")" : "");
}

std::string quantName(const cw::engine::ModelDescription& d)
{
    const auto type = d.metadata.find("general.file_type");
    if (type != d.metadata.end())
        if (auto name = cw::engine::llamaFileTypeName(std::uint32_t(std::stoul(type->second))))
            return *name;
    return "unknown";
}

double parameterCount(const cw::engine::ModelDescription& d)
{
    double n = 0;
    for (const auto& [name, t] : d.tensors)
        n += double(t.elements());
    return n;
}

// Bytes one decode step must read from memory: every dense matrix once, the experts the batch
// is expected to touch (B sequences choosing k of E at random touch E (1 - (1 - k/E)^B)), each
// sequence's recurrent states (read and written) and its KV cache up to `context`.
double bytesPerDecodeStep(const cw::engine::ModelDescription& d, int batch, std::int64_t context)
{
    const auto& hp = d.hparams;
    const bool tied = !d.find("output.weight");
    double dense = 0, experts = 0;
    for (const auto& [name, t] : d.tensors) {
        if (name.find("_exps.") != std::string::npos)
            experts += double(t.bytes);
        else if (name != "token_embd.weight" || tied)
            dense += double(t.bytes);
    }
    const double E = double(std::max<std::int64_t>(hp.numExperts, 1));
    const double touched = E * (1.0 - std::pow(1.0 - double(hp.numExpertsPerToken) / E, batch));
    double perSequence = 0;
    for (const auto kind : hp.layerKinds) {
        if (kind == cw::engine::LayerKind::GatedDeltaNet)
            perSequence += 2.0 * 4.0
                * double(hp.linearNumValueHeads * hp.linearKeyHeadDim * hp.linearValueHeadDim);
        else
            perSequence += 2.0 * 4.0 * double(hp.numKvHeads * hp.headDim) * double(context);
    }
    if (hp.layerKinds.empty())
        perSequence = double(hp.numLayers) * 2.0 * 4.0 * double(hp.numKvHeads * hp.headDim)
            * double(context);
    return dense + experts / E * touched + double(batch) * perSequence;
}

// Host memory bandwidth (bytes read + written per second) by parallel copies of 1 GiB.
double hostCopyBandwidth(int threads)
{
    const std::size_t bytes = std::size_t(1) << 30;
    std::vector<char> a(bytes, 1), b(bytes, 0);
    cw::kernels::ThreadPool pool(threads);
    double best = 0;
    for (int i = 0; i < 4; ++i) {
        const auto start = Clock::now();
        pool.parallelFor(std::int64_t(bytes >> 20), [&](std::int64_t begin, std::int64_t end) {
            std::memcpy(
                b.data() + (begin << 20), a.data() + (begin << 20), std::size_t(end - begin) << 20);
        });
        best = std::max(best, 2.0 * double(bytes) / seconds(start));
    }
    return best;
}

double peakHostMib()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

int runBench(std::span<char*> args)
{
    CLI::App app { "Measure prefill and decode speed (one JSON object per run)", "bench" };
    cw::cli::showDefaultsInHelp(app);
    std::string modelPath, device = "cuda", precision = "bf16";
    int promptTokens = 512, genTokens = 128, batch = 1, repeat = 1, threads = 0;
    std::int64_t chunk = 0;
    app.add_option("--model", modelPath, "GGUF file or Hugging Face folder")->required();
    app.add_option("--device", device, "cpu, cuda, cuda:N or auto (default cuda)");
    double gpuMemory = 0.0;
    cw::cli::addGpuMemoryOption(app, gpuMemory);
    app.add_option("--prompt-tokens", promptTokens, "prompt length per sequence (default 512)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--gen-tokens", genTokens, "tokens decoded per sequence (default 128)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--batch", batch, "sequences decoded together (default 1)")
        ->check(CLI::Range(1, 1024));
    app.add_option("--repeat", repeat, "runs (default 1)")->check(CLI::Range(1, 1000));
    app.add_option("--threads", threads, "CPU threads (0: all)");
    app.add_option("--prefill-chunk", chunk, "tokens per prefill step (0: the backend's default)");
    app.add_option(
           "--precision", precision, "arithmetic: f32 (the reference), tf32 or bf16 (fastest)")
        ->check(CLI::IsMember({ "f32", "tf32", "bf16" }))
        ->capture_default_str();
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    auto description = cw::engine::openModel(modelPath);
    if (!description) {
        std::fprintf(stderr, "bench: %s\n", description.error().message.c_str());
        return 1;
    }
    const std::string name = modelName(*description), quant = quantName(*description);
    const double parameters = parameterCount(*description);
    const std::int64_t context = std::int64_t(promptTokens) + genTokens;
    const double stepBytes = bytesPerDecodeStep(*description, batch, promptTokens + genTokens / 2);
    const auto vocab = description->hparams.vocabSize;
    cw::engine::ModelOptions options;
    options.device = device;
    options.gpuMemoryGiB = gpuMemory;
    options.threads = threads;
    options.contextLength = context;
    options.maxSequences = batch;
    options.maxKvTokens = std::int64_t(batch) * (context + 16);
    options.prefillChunk = chunk;
    if (auto ok = cw::engine::applyPrecision(options, precision); !ok) {
        std::fprintf(stderr, "bench: %s\n", ok.error().message.c_str());
        return 1;
    }
    const auto loadStart = Clock::now();
    auto loaded = cw::engine::Model::create(std::move(*description), options);
    if (!loaded) {
        std::fprintf(stderr, "bench: %s\n", loaded.error().message.c_str());
        return 1;
    }
    auto& model = **loaded;
    std::fprintf(
        stderr, "bench: loaded in %.1f s; %s\n", seconds(loadStart), model.memoryPlan().c_str());
    double bandwidth = 0;
    if (model.onGpu()) {
        const auto spec = device.rfind("cuda:", 0) == 0 ? std::atoi(device.c_str() + 5) : 0;
        bandwidth = cw::kernels::cudaCopyBandwidth(spec);
    } else {
        bandwidth = hostCopyBandwidth(threads);
    }
    const char* commitEnv = std::getenv("CW_COMMIT");
    const std::string commit = commitEnv && *commitEnv ? commitEnv : CW_GIT_COMMIT;

    std::mt19937 rng(7);
    std::uniform_int_distribution<std::int32_t> pick(
        0, std::int32_t(std::min<std::int64_t>(vocab, 100000) - 1));
    for (int run = 0; run < repeat; ++run) {
        std::vector<std::unique_ptr<cw::engine::Sequence>> sequences;
        double prefillSeconds = 0, ttft = 0;
        std::vector<std::int32_t> next;
        for (int b = 0; b < batch; ++b) {
            std::vector<std::int32_t> prompt(static_cast<std::size_t>(promptTokens));
            for (auto& t : prompt)
                t = pick(rng);
            sequences.push_back(model.newSequence());
            const auto start = Clock::now();
            auto logits = model.prefill(*sequences.back(), prompt);
            if (!logits) {
                std::fprintf(stderr, "bench: prefill: %s\n", logits.error().message.c_str());
                return 1;
            }
            const double took = seconds(start);
            prefillSeconds += took;
            if (b == 0)
                ttft = took;
            next.push_back(
                std::int32_t(std::max_element(logits->begin(), logits->end()) - logits->begin()));
        }
        const auto decodeStart = Clock::now();
        for (int g = 1; g < genTokens; ++g) {
            std::vector<cw::engine::ForwardRequest> requests;
            for (int b = 0; b < batch; ++b)
                requests.push_back({ sequences[std::size_t(b)].get(),
                    std::span<const std::int32_t>(&next[std::size_t(b)], 1), false });
            auto ids = model.stepGreedy(requests);
            if (!ids) {
                std::fprintf(stderr, "bench: decode: %s\n", ids.error().message.c_str());
                return 1;
            }
            next = *ids;
        }
        const double decodeSeconds = seconds(decodeStart);
        const int decodeSteps = std::max(genTokens - 1, 1);
        const double perSequence = genTokens > 1 ? decodeSteps / decodeSeconds : 0.0;
        nlohmann::json out {
            { "model", name },
            { "parameters_b", std::round(parameters / 1e8) / 10.0 },
            { "quant", quant },
            { "device", model.deviceName() },
            { "commit", commit },
            { "batch", batch },
            { "prompt_tokens", promptTokens },
            { "gen_tokens", genTokens },
            { "prefill_tokens_per_s", double(batch) * promptTokens / prefillSeconds },
            { "decode_tokens_per_s", perSequence },
            { "decode_tokens_per_s_total", perSequence * batch },
            { "ttft_ms", ttft * 1e3 },
            { "peak_device_mib",
                model.onGpu() ? double(model.peakMemoryBytes()) / (1 << 20) : peakHostMib() },
            { "bandwidth_gb_per_s", bandwidth / 1e9 },
            { "bytes_per_decode_step_gb", stepBytes / 1e9 },
            { "bandwidth_fraction",
                bandwidth > 0 && genTokens > 1
                    ? stepBytes * (decodeSteps / decodeSeconds) / bandwidth
                    : 0.0 },
            { "run", run },
        };
        // The A/B knobs in force, so a figure never loses the setting it was measured under.
        nlohmann::json switches = nlohmann::json::object();
        for (const auto& [switchName, value] : cw::kernels::cudaSwitchesSet())
            switches[switchName] = value;
        out["cuda_switches"] = switches;
        std::printf("%s\n", out.dump().c_str());
        std::fflush(stdout);
    }
    // What the runs made of the plan (with experts in host memory: the CPU's share of them).
    std::fprintf(stderr, "bench: after the runs: %s\n", model.memoryPlan().c_str());
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "bench",
    "prefill and decode speed on the CPU or a GPU (JSON per run)", runBench } };

} // namespace
