// `clausewright-cli synth`: a random-weight GGUF with the exact geometry of a model, for
// benchmarks and tests.
#include "app/cli/cli_command.h"
#include "engine/model_files/model_presets.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

namespace {

int runSynth(std::span<char*> args)
{
    CLI::App app { "Write a random-weight GGUF file with the exact geometry of a model preset",
        "synth" };
    std::string preset;
    std::string quant = "q4_k_m";
    std::string out;
    std::uint64_t seed = 0;
    bool list = false;
    app.add_option("--preset", preset, "qwen3-30b-a3b, qwen3.6-35b-a3b, tiny-qwen3-moe, ...");
    app.add_option("--quant", quant, "f32, f16, bf16, q8_0, q6_k, q4_k_m, ... (default q4_k_m)");
    app.add_option("--out", out, "output .gguf file");
    app.add_option("--seed", seed, "random seed (default 0)");
    app.add_flag("--list", list, "list the presets");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (list) {
        for (const auto& p : cw::engine::modelPresets())
            std::printf("%-18s %s\n", p.name.c_str(), p.description.c_str());
        return 0;
    }
    const auto* found = cw::engine::findModelPreset(preset);
    if (!found) {
        std::fprintf(stderr, "synth: unknown preset \"%s\" (see synth --list)\n", preset.c_str());
        return 2;
    }
    if (out.empty()) {
        std::fprintf(stderr, "synth: --out FILE.gguf is required\n");
        return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    int lastPercent = -1;
    auto summary = cw::engine::synthesizeGguf(
        *found, quant, seed, out, [&lastPercent](std::size_t done, std::size_t total) {
            const int percent = int(done * 100 / total);
            if (percent / 10 != lastPercent / 10) {
                std::fprintf(stderr, "\rsynth: %3d%%", percent);
                lastPercent = percent;
            }
        });
    std::fprintf(stderr, "\n");
    if (!summary) {
        std::fprintf(stderr, "synth: %s\n", summary.error().message.c_str());
        return 1;
    }
    const double seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: %zu tensors, %.2f GiB in %.1f s (", out.c_str(), summary->tensorCount,
        double(summary->fileBytes) / double(1ull << 30), seconds);
    bool first = true;
    for (const auto& [type, count] : summary->tensorsPerType) {
        std::printf("%s%s x%zu", first ? "" : ", ", type.c_str(), count);
        first = false;
    }
    std::printf(")\n");
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "synth",
    "write a random-weight GGUF with the geometry of a model preset", runSynth } };

} // namespace
