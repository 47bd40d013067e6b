// `clausewright-cli synth`: a random-weight GGUF with the exact geometry of a model, for
// benchmarks and tests.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/cli/engine_commands/gguf_write_report.h"
#include "engine/model_files/model_presets.h"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace {

int runSynth(std::span<char*> args)
{
    CLI::App app { "Write a random-weight GGUF file with the exact geometry of a model preset",
        "synth" };
    cw::cli::showDefaultsInHelp(app);
    std::string preset;
    std::string quant = "q4_k_m";
    std::string out;
    std::uint64_t seed = 0;
    double routerSkew = 0.0;
    bool list = false;
    app.add_option("--preset", preset, "qwen3-30b-a3b, qwen3.6-35b-a3b, tiny-qwen3-moe, ...");
    app.add_option("--quant", quant, "f32, f16, bf16, q8_0, q6_k, q4_k_m, ... (default q4_k_m)");
    app.add_option("--out", out, "output .gguf file");
    app.add_option("--seed", seed, "random seed (default 0)");
    app.add_option("--router-skew", routerSkew,
           "bias routing toward a few experts per layer as trained models do: the expert at "
           "rank r gets router weights scaled by (1 + r)^-S; 0.2 gives the most chosen quarter "
           "of 256 experts about 57 % of the choices (default 0: uniform routing)")
        ->check(CLI::Range(0.0, 4.0));
    app.add_flag("--list", list, "list the presets");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
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
    cw::cli::GgufWriteReport report("synth");
    const auto summary = cw::engine::synthesizeGguf(*found, quant, seed, out, report.progress(), routerSkew);
    return report.finish(out, summary);
}

const cw::cli::CliCommandRegistration kRegistration { { "synth",
    "write a random-weight GGUF with the geometry of a model preset", runSynth } };

} // namespace
