// `clausewright-cli inspect PATH [--context N] [--batch N]` (or --model PATH): what a model file
// holds and what it needs: architecture, parameters (total and active per token), quantization mix,
// tensor groups, and the memory for weights, the KV cache of the attention layers and the
// Gated DeltaNet state at a given context and batch. PATH: a GGUF file or a Hugging Face
// model (anything openModel accepts).
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "engine/backend/expert_placement.h"
#include "engine/model_files/model_loader.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace {

using cw::engine::Architecture;
using cw::engine::LayerKind;
using cw::engine::ModelDescription;
using cw::engine::TensorView;

bool isRoutedExpert(const std::string& name)
{
    return name.find("_exps.") != std::string::npos;
}

// The block index of "blk.N.*", or -1.
long long blockOf(const std::string& name)
{
    long long layer = -1;
    if (std::sscanf(name.c_str(), "blk.%lld.", &layer) != 1)
        return -1;
    return layer;
}

std::string typeName(cw::kernels::TensorType type)
{
    const auto traits = cw::kernels::tensorTypeTraits(std::uint32_t(type));
    return traits ? std::string(traits->name) : "unknown";
}

nlohmann::json parameters(const ModelDescription& model)
{
    const auto& h = model.hparams;
    std::int64_t total = 0, routed = 0, mtp = 0, embeddings = 0, other = 0;
    for (const auto& [name, view] : model.tensors) {
        const std::int64_t n = view.elements();
        total += n;
        if (blockOf(name) >= h.numLayers)
            mtp += n;
        else if (isRoutedExpert(name))
            routed += n;
        else if (name == "token_embd.weight" || name == "output.weight")
            embeddings += n;
        else
            other += n;
    }
    if (h.tieWordEmbeddings)
        embeddings *= 2; // the table is also the output head
    const double share
        = h.numExperts > 0 ? double(h.numExpertsPerToken) / double(h.numExperts) : 1.0;
    const auto activeExperts = std::int64_t(double(routed) * share + 0.5);
    return { { "total", total }, { "routed_experts", routed }, { "mtp_block", mtp },
        // Qwen's "A3B" counts the embedding table and the output head; MTP is not run.
        { "active_per_token", other + embeddings + activeExperts },
        { "active_per_token_without_embeddings", other + activeExperts } };
}

nlohmann::json quantizationMix(const ModelDescription& model)
{
    struct Entry {
        std::int64_t tensors = 0, parameters = 0;
        std::uint64_t bytes = 0;
    };
    std::map<std::string, Entry> byType;
    for (const auto& [name, view] : model.tensors) {
        auto& e = byType[typeName(view.type)];
        ++e.tensors;
        e.parameters += view.elements();
        e.bytes += view.bytes;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [type, e] : byType)
        list.push_back({ { "type", type }, { "tensors", e.tensors }, { "parameters", e.parameters },
            { "bytes", e.bytes } });
    return list;
}

nlohmann::json tensorGroups(const ModelDescription& model)
{
    struct Group {
        std::int64_t count = 0;
        std::set<std::string> types;
        std::set<std::vector<std::int64_t>> shapes;
        std::uint64_t bytes = 0;
    };
    static const std::regex layer(R"(^blk\.\d+\.)");
    std::map<std::string, Group> groups;
    for (const auto& [name, view] : model.tensors) {
        auto& g = groups[std::regex_replace(name, layer, "blk.*.")];
        ++g.count;
        g.types.insert(typeName(view.type));
        g.shapes.insert(std::vector<std::int64_t>(view.ne.begin(), view.ne.begin() + view.nDims));
        g.bytes += view.bytes;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [name, g] : groups) {
        list.push_back({ { "name", name }, { "count", g.count },
            { "types", std::vector<std::string>(g.types.begin(), g.types.end()) },
            { "shapes", std::vector<std::vector<std::int64_t>>(g.shapes.begin(), g.shapes.end()) },
            { "bytes", g.bytes } });
    }
    return list;
}

nlohmann::json memory(
    const ModelDescription& model, std::int64_t context, std::int64_t batch, int kvBytes)
{
    const auto& h = model.hparams;
    std::uint64_t weights = 0, routed = 0;
    std::set<long long> moeLayers;
    for (const auto& [name, view] : model.tensors) {
        weights += view.bytes;
        if (isRoutedExpert(name) && blockOf(name) < h.numLayers) {
            routed += view.bytes;
            moeLayers.insert(blockOf(name));
        }
    }
    std::int64_t attention = 0, deltaNet = 0;
    for (auto kind : h.layerKinds)
        (kind == LayerKind::FullAttention ? attention : deltaNet) += 1;
    // K and V per attention layer, per token of each sequence.
    const std::uint64_t kvPerToken = std::uint64_t(attention) * 2
        * std::uint64_t(h.numKvHeads * h.headDim) * std::uint64_t(kvBytes);
    const std::uint64_t kv = kvPerToken * std::uint64_t(context) * std::uint64_t(batch);
    // Per DeltaNet layer and sequence (float32): the recurrent state, one dK x dV matrix per
    // value head, and the last (kernel - 1) inputs of the causal convolution over q, k and v.
    const std::int64_t convChannels = 2 * h.linearNumKeyHeads * h.linearKeyHeadDim
        + h.linearNumValueHeads * h.linearValueHeadDim;
    const std::uint64_t recurrent = std::uint64_t(deltaNet)
        * std::uint64_t(h.linearNumValueHeads * h.linearKeyHeadDim * h.linearValueHeadDim) * 4
        * std::uint64_t(batch);
    const std::uint64_t conv = std::uint64_t(deltaNet)
        * std::uint64_t(std::max<std::int64_t>(h.linearConvKernel - 1, 0) * convChannels) * 4
        * std::uint64_t(batch);
    return { { "context", context }, { "batch", batch }, { "attention_layers", attention },
        { "deltanet_layers", deltaNet }, { "weights_bytes", weights },
        { "kv_cache_element_bytes", kvBytes }, { "kv_cache_bytes_per_token", kvPerToken },
        { "kv_cache_bytes", kv }, { "deltanet_recurrent_state_bytes", recurrent },
        { "deltanet_conv_state_bytes", conv }, { "total_bytes", weights + kv + recurrent + conv },
        // What a GPU may keep in host memory when the model is over its budget (--gpu-memory).
        { "routed_expert_bytes", routed }, { "moe_layers", moeLayers.size() } };
}

nlohmann::json hyperParameters(const cw::engine::HyperParameters& h)
{
    nlohmann::json j = { { "vocab_size", h.vocabSize }, { "hidden_size", h.hiddenSize },
        { "layers", h.numLayers }, { "mtp_layers", h.mtpLayers }, { "attention_heads", h.numHeads },
        { "kv_heads", h.numKvHeads }, { "head_dim", h.headDim }, { "rope_dim", h.ropeDim },
        { "rope_theta", h.ropeTheta }, { "rms_norm_eps", h.rmsNormEps },
        { "experts", h.numExperts }, { "experts_per_token", h.numExpertsPerToken },
        { "expert_ffn_size", h.expertFfnSize }, { "shared_expert_ffn_size", h.sharedExpertFfnSize },
        { "tie_word_embeddings", h.tieWordEmbeddings },
        { "attention_output_gate", h.attentionOutputGate } };
    if (h.architecture == Architecture::Qwen35Moe) {
        std::string kinds;
        for (auto k : h.layerKinds)
            kinds += k == LayerKind::FullAttention ? 'A' : 'D';
        j["layer_kinds"] = kinds; // A: full attention, D: Gated DeltaNet
        j["linear_key_heads"] = h.linearNumKeyHeads;
        j["linear_value_heads"] = h.linearNumValueHeads;
        j["linear_key_head_dim"] = h.linearKeyHeadDim;
        j["linear_value_head_dim"] = h.linearValueHeadDim;
        j["linear_conv_kernel"] = h.linearConvKernel;
    }
    return j;
}

int runInspect(std::span<char*> args)
{
    CLI::App app { "Describe a model file: architecture, parameters, quantization, memory",
        "inspect" };
    cw::cli::showDefaultsInHelp(app);
    std::string path;
    std::int64_t context = 0;
    std::int64_t batch = 1;
    int kvBytes = 4; // both backends keep the KV cache in f32
    // The path as the other commands take a file (`review FILE`), or as --model like
    // `generate` and `bench`; one of the two is needed.
    auto* positional = app.add_option("MODEL", path, "GGUF file or Hugging Face model folder");
    auto* named = app.add_option("--model", path, "the same as MODEL");
    positional->excludes(named);
    app.add_option("--context", context,
           "tokens per sequence for the memory estimate (default: the model's context length)")
        ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 30));
    app.add_option("--batch", batch, "sequences held at once")
        ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 20));
    double gpuMemory = 0.0;
    app.add_option("--gpu-memory", gpuMemory,
           "instead of the JSON, say in words where the memory would go on a GPU with this many "
           "GiB for the model (weights, the KV cache and states at --context and --batch, and "
           "about 1 GiB for each step's buffers)")
        ->check(CLI::Range(0.001, 1e6));
    app.add_option("--kv-bytes", kvBytes,
           "bytes per KV-cache element (4: f32, what both backends store; 2: f16/bf16, 1: 8-bit)")
        ->check(CLI::IsMember({ 1, 2, 4 }));
    try {
        app.parse(int(args.size()), args.data());
        if (path.empty())
            throw CLI::RequiredError("MODEL (a GGUF file or Hugging Face folder) or --model");
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    auto model = cw::engine::openModel(path);
    if (!model) {
        std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
        return 1;
    }
    const auto& h = model->hparams;
    if (context == 0)
        context = h.contextLength > 0 ? h.contextLength : 4096;
    nlohmann::json out = {
        { "path", path },
        { "name", model->name },
        { "format",
            model->metadata.count("format") ? model->metadata.at("format") : "safetensors" },
        { "architecture", h.architecture == Architecture::Qwen35Moe ? "qwen35moe" : "qwen3moe" },
        { "context_length", h.contextLength },
        { "hyperparameters", hyperParameters(h) },
        { "parameters", parameters(*model) },
        { "quantization", quantizationMix(*model) },
        { "tensors", { { "count", model->tensors.size() }, { "groups", tensorGroups(*model) } } },
        { "memory", memory(*model, context, batch, kvBytes) },
    };
    if (gpuMemory > 0.0) {
        const auto& m = out["memory"];
        const std::uint64_t need = m["total_bytes"].get<std::uint64_t>() + cw::engine::kGpuStepMemoryBytes;
        const auto budget = std::uint64_t(gpuMemory * double(1ull << 30));
        const auto estimate = cw::engine::estimateOffload(need,
            m["routed_expert_bytes"].get<std::uint64_t>(), m["moe_layers"].get<int>(), budget);
        std::printf("%s (%s, %lld tokens of context, %lld sequences)\n%s\n", path.c_str(),
            model->name.c_str(), static_cast<long long>(context), static_cast<long long>(batch),
            estimate.describe(budget).c_str());
        return estimate.fit == cw::engine::OffloadEstimate::Fit::No ? 1 : 0;
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "inspect",
    "describe a model: architecture, parameters, quantization mix, memory", runInspect } };

} // namespace
