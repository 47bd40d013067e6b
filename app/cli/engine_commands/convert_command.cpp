// `clausewright-cli convert`: a Hugging Face folder to a llama.cpp GGUF file, quantized.
#include "app/cli/cli_command.h"
#include "engine/model_files/hf_gguf_converter.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

namespace {

int runConvert(std::span<char*> args)
{
    CLI::App app { "Convert a Hugging Face model folder to GGUF as llama.cpp's converter and "
                   "quantizer would",
        "convert" };
    std::string from;
    std::string to;
    std::string quant = "q8_0";
    app.add_option("--from", from, "Hugging Face folder (or a .safetensors beside config.json)")
        ->required();
    app.add_option("--to", to, "output .gguf file")->required();
    app.add_option("--quant", quant, "q8_0, q4_k_m, q6_k, bf16, f32 ... (default q8_0)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    const auto start = std::chrono::steady_clock::now();
    int lastPercent = -1;
    auto summary = cw::engine::convertHfToGguf(
        from, to, quant, [&lastPercent](std::size_t done, std::size_t total) {
            const int percent = int(done * 100 / total);
            if (percent / 10 != lastPercent / 10) {
                std::fprintf(stderr, "\rconvert: %3d%%", percent);
                lastPercent = percent;
            }
        });
    std::fprintf(stderr, "\n");
    if (!summary) {
        std::fprintf(stderr, "convert: %s\n", summary.error().message.c_str());
        return 1;
    }
    const double seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: %zu tensors, %.3f GiB in %.1f s (", to.c_str(), summary->tensorCount,
        double(summary->fileBytes) / double(1ull << 30), seconds);
    bool first = true;
    for (const auto& [type, count] : summary->tensorsPerType) {
        std::printf("%s%s x%zu", first ? "" : ", ", type.c_str(), count);
        first = false;
    }
    std::printf(")\n");
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "convert",
    "convert a Hugging Face model folder to a (quantized) GGUF file", runConvert } };

} // namespace
