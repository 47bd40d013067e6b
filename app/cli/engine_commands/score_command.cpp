// `clausewright-cli score --model PATH --ids-file F.json --logits-out OUT.npy [--device
// cpu|cuda:N|auto]
// [--precision f32|tf32|bf16]`:
// runs the model over a list of token ids and writes the logits at every position as a float32
// .npy of shape [n_tokens, vocab] (for comparisons with transformers). F.json holds a JSON
// array of ids, or an object with an "ids" array.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "engine/runtime/precision.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

bool writeNpy(
    const std::string& path, const std::vector<float>& data, std::int64_t rows, std::int64_t cols)
{
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': ("
        + std::to_string(rows) + ", " + std::to_string(cols) + "), }";
    const std::size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header.push_back('\n');
    std::ofstream out(path, std::ios::binary);
    if (!out)
        return false;
    const char magic[] = { '\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0 };
    out.write(magic, 8);
    const std::uint16_t len = std::uint16_t(header.size());
    out.write(reinterpret_cast<const char*>(&len), 2);
    out.write(header.data(), std::streamsize(header.size()));
    out.write(
        reinterpret_cast<const char*>(data.data()), std::streamsize(data.size() * sizeof(float)));
    return bool(out);
}

int fail(const std::string& message)
{
    std::fprintf(stderr, "score: %s\n", message.c_str());
    return 1;
}

int runScore(std::span<char*> args)
{
    CLI::App app { "Write the logits of a model at every position of a token list as .npy",
        "score" };
    cw::cli::showDefaultsInHelp(app);
    std::string modelPath, idsPath, outPath, device = "cpu";
    std::string precision(cw::engine::kDefaultPrecision);
    int threads = 0;
    app.add_option("--model", modelPath, "GGUF file or Hugging Face folder")->required();
    app.add_option("--ids-file", idsPath, "JSON array of token ids (or {\"ids\": [...]})")
        ->required();
    app.add_option("--logits-out", outPath, "output .npy, float32 [n_tokens, vocab]")->required();
    app.add_option("--device", device, "where the model runs: cpu, cuda, cuda:N or auto");
    double gpuMemory = 0.0;
    cw::cli::addGpuMemoryOption(app, gpuMemory);
    app.add_option("--threads", threads, "CPU threads (0: all)");
    app.add_option(
           "--precision", precision, "arithmetic: f32 (the reference), tf32 or bf16 (fastest)")
        ->check(CLI::IsMember({ "f32", "tf32", "bf16" }))
        ->capture_default_str();
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    std::ifstream in(idsPath);
    if (!in)
        return fail("cannot read " + idsPath);
    const auto json = nlohmann::json::parse(in, nullptr, false);
    const auto& list = json.is_object() && json.contains("ids") ? json["ids"] : json;
    if (!list.is_array() || list.empty())
        return fail(idsPath + ": expected a non-empty JSON array of token ids");
    std::vector<std::int32_t> ids;
    for (const auto& v : list) {
        if (!v.is_number_integer())
            return fail(idsPath + ": every id must be an integer");
        ids.push_back(v.get<std::int32_t>());
    }
    auto description = cw::engine::openModel(modelPath);
    if (!description)
        return fail(description.error().message);
    cw::engine::ModelOptions options;
    options.threads = threads;
    options.device = device;
    options.gpuMemoryGiB = gpuMemory;
    if (auto ok = cw::engine::applyPrecision(options, precision); !ok)
        return fail(ok.error().message);
    auto model = cw::engine::Model::create(std::move(*description), options);
    if (!model)
        return fail(model.error().message);
    auto sequence = (*model)->newSequence();
    auto logits = (*model)->prefill(*sequence, ids, true);
    if (!logits)
        return fail(logits.error().message);
    if (!writeNpy(outPath, *logits, std::int64_t(ids.size()), (*model)->vocabSize()))
        return fail("cannot write " + outPath);
    std::printf("%zu tokens x %lld logits written to %s\n", ids.size(),
        static_cast<long long>((*model)->vocabSize()), outPath.c_str());
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "score",
    "write a model's logits at every position of a token list (.npy)", runScore } };

} // namespace
