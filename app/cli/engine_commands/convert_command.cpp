// `clausewright-cli convert`: a Hugging Face folder to a llama.cpp GGUF file, quantized.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/cli/engine_commands/gguf_write_report.h"
#include "engine/model_files/hf_gguf_converter.h"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace {

int runConvert(std::span<char*> args)
{
    CLI::App app { "Convert a Hugging Face model folder to GGUF as llama.cpp's converter and "
                   "quantizer would",
        "convert" };
    cw::cli::showDefaultsInHelp(app);
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
        return cw::cli::usageExit(app, e);
    }
    cw::cli::GgufWriteReport report("convert");
    const auto summary = cw::engine::convertHfToGguf(from, to, quant, report.progress());
    return report.finish(to, summary);
}

const cw::cli::CliCommandRegistration kRegistration { { "convert",
    "convert a Hugging Face model folder to a (quantized) GGUF file", runConvert } };

} // namespace
