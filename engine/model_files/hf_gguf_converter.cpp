#include "engine/model_files/hf_gguf_converter.h"

#include "engine/model_files/gguf_writer.h"
#include "engine/model_files/hf_config.h"
#include "engine/model_files/hf_gguf_layout.h"
#include "engine/model_files/hf_model_loader.h"
#include "kernels/cpu/quant/quant_blocks.h"
#include "kernels/cpu/quant/quantize.h"

#include <cmath>
#include <cstring>
#include <filesystem>

namespace cw::engine {

namespace {

namespace fs = std::filesystem;
namespace quant = kernels::quant;
using kernels::TensorType;

// The view's elements as float32, expert slices concatenated.
std::vector<float> readFloats(const TensorView& view)
{
    const auto n = std::size_t(view.elements());
    std::vector<float> out(n);
    const std::size_t outer = view.slices.empty() ? 1 : view.slices.size();
    const std::size_t perSlice = n / outer;
    for (std::size_t s = 0; s < outer; ++s) {
        const std::byte* src = view.slices.empty() ? view.data : view.slices[s];
        float* dst = out.data() + s * perSlice;
        for (std::size_t i = 0; i < perSlice; ++i) {
            if (view.type == TensorType::F32) {
                std::memcpy(dst + i, src + 4 * i, 4);
            } else {
                std::uint16_t bits;
                std::memcpy(&bits, src + 2 * i, 2);
                dst[i] = view.type == TensorType::BF16 ? quant::bf16ToFp32(bits)
                                                       : quant::fp16ToFp32(bits);
            }
        }
    }
    return out;
}

// Grouped -> tiled order of `heads = nK * perK` heads of `headDim` units each, every unit
// `unit` floats long: new head j * nK + k is old head k * perK + j.
void reorderHeads(
    float* data, std::int64_t nK, std::int64_t perK, std::int64_t headDim, std::int64_t unit)
{
    const std::int64_t headFloats = headDim * unit;
    std::vector<float> old(data, data + nK * perK * headFloats);
    for (std::int64_t j = 0; j < perK; ++j) {
        for (std::int64_t k = 0; k < nK; ++k) {
            std::memcpy(data + (j * nK + k) * headFloats, old.data() + (k * perK + j) * headFloats,
                std::size_t(headFloats) * sizeof(float));
        }
    }
}

bool endsWith(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size()
        && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// llama.cpp's qwen35moe transforms of one tensor (data in ggml order: rows of ne[0]).
void transform(const GgufTensorSpec& spec, const HyperParameters& h, std::vector<float>& data)
{
    if (spec.role == GgufTensorRole::ZeroCentredNorm) {
        for (auto& v : data)
            v += 1.0f;
        return;
    }
    if (h.architecture != Architecture::Qwen35Moe)
        return;
    const std::int64_t nK = h.linearNumKeyHeads;
    const std::int64_t perK = h.linearNumValueHeads / std::max<std::int64_t>(1, nK);
    const bool reorder = nK > 0 && perK > 1;
    const std::int64_t keys = h.linearNumKeyHeads * h.linearKeyHeadDim;
    const std::int64_t dv = h.linearValueHeadDim;
    const std::int64_t rowLength = spec.ne[0];
    const std::string& name = spec.name;
    if (spec.role == GgufTensorRole::SsmA) {
        for (auto& v : data)
            v = -std::exp(v);
    }
    if (!reorder)
        return;
    if (endsWith(name, ".attn_qkv.weight"))
        reorderHeads(data.data() + 2 * keys * rowLength, nK, perK, dv, rowLength);
    else if (endsWith(name, ".attn_gate.weight"))
        reorderHeads(data.data(), nK, perK, dv, rowLength);
    else if (endsWith(name, ".ssm_alpha.weight") || endsWith(name, ".ssm_beta.weight"))
        reorderHeads(data.data(), nK, perK, 1, rowLength);
    else if (spec.role == GgufTensorRole::SsmA || spec.role == GgufTensorRole::SsmDtBias)
        reorderHeads(data.data(), nK, perK, 1, 1);
    else if (spec.role == GgufTensorRole::SsmConv)
        reorderHeads(data.data() + 2 * keys * rowLength, nK, perK, dv, rowLength);
    else if (endsWith(name, ".ssm_out.weight")) {
        const std::int64_t rows = std::int64_t(data.size()) / rowLength;
        for (std::int64_t r = 0; r < rows; ++r)
            reorderHeads(data.data() + r * rowLength, nK, perK, dv, 1);
    }
}

Result<ModelDescription> openSource(const std::string& from)
{
    std::error_code ec;
    if (fs::is_directory(from, ec))
        return openHuggingFaceModel(from);
    return openHuggingFaceSafetensors(from);
}

} // namespace

Result<SynthSummary> convertHfToGguf(const std::string& from, const std::string& outPath,
    std::string_view mix, const std::function<void(std::size_t, std::size_t)>& progress)
{
    const auto fileType = llamaFileType(mix);
    if (!fileType || !quant::isKnownMix(mix))
        return makeError("unknown quantization \"" + std::string(mix)
            + "\" (use f32, bf16, q8_0, q6_k, q4_k_m ...)");
    auto source = openSource(from);
    if (!source)
        return source.error();
    // Shared so the fill callbacks can keep the memory maps alive until write() ends.
    auto model = std::make_shared<ModelDescription>(std::move(source.value()));
    const HyperParameters& h = model->hparams;
    std::error_code ec;
    const fs::path folder
        = fs::is_directory(from, ec) ? fs::path(from) : fs::path(from).parent_path();
    auto config = readHfConfig((folder / "config.json").string());
    if (!config)
        return config.error();
    if (model->tokenizer.tokenizerJsonPath.empty())
        return makeError(folder.string() + ": no tokenizer.json to convert the vocabulary from");
    const bool qwen35 = h.architecture == Architecture::Qwen35Moe;
    // llama.cpp's qwen35moe has one ssm.state_size for the key and the value head size.
    if (qwen35 && h.linearKeyHeadDim != h.linearValueHeadDim)
        return makeError(from + ": linear_key_head_dim (" + std::to_string(h.linearKeyHeadDim)
            + ") differs from linear_value_head_dim (" + std::to_string(h.linearValueHeadDim)
            + "); a qwen35moe GGUF file has one ssm.state_size for both, so this model cannot "
              "be converted (load the Hugging Face folder directly)");
    auto vocabulary = vocabularyFromTokenizerJson(model->tokenizer.tokenizerJsonPath,
        model->tokenizer.tokenizerConfigPath, h.vocabSize, qwen35 ? "qwen35" : "qwen2");
    if (!vocabulary)
        return vocabulary.error();
    if (!vocabulary->eos && model->tokenizer.eosId)
        vocabulary->eos = model->tokenizer.eosId;
    if (!vocabulary->pad && model->tokenizer.padId)
        vocabulary->pad = model->tokenizer.padId;

    GgufWriter writer;
    setGgufHyperParameters(writer, h, { model->name, *fileType, config->mropeSections });
    setGgufVocabulary(writer, vocabulary.value(), model->chatTemplate);

    const auto specs = ggufTensorLayout(h);
    std::vector<std::string> names;
    for (const auto& spec : specs) {
        if (!model->find(spec.name))
            return makeError(from + ": the model has no tensor for " + spec.name);
        names.push_back(spec.name);
    }
    quant::QuantizationMix quantMix(std::string(mix), names, h.numLayers, h.numExperts);
    SynthSummary summary;
    auto done = std::make_shared<std::size_t>(0);
    const std::size_t total = specs.size();
    for (const auto& spec : specs) {
        const TensorType type
            = quantMix.next(spec.name, spec.effectiveDims(), spec.ne[0], TensorType::F32);
        if (!quant::canQuantize(type))
            return makeError(spec.name + ": the mix \"" + std::string(mix) + "\" asks for type "
                + std::string(kernels::tensorTypeTraits(std::uint32_t(type))->name)
                + ", which this converter cannot write");
        summary.tensorsPerType[std::string(kernels::tensorTypeTraits(std::uint32_t(type))->name)]++;
        writer.addTensor(spec.name, type, spec.ne,
            [model, spec, type, done, total, &progress](
                std::byte* dst, std::uint64_t bytes) -> Result<void> {
                auto data = readFloats(model->get(spec.name));
                transform(spec, model->hparams, data);
                const std::int64_t rowLength = spec.ne[0];
                const auto rowBytes = kernels::rowBytes(type, std::uint64_t(rowLength));
                const std::int64_t rows = std::int64_t(data.size()) / rowLength;
                if (!rowBytes || *rowBytes * std::uint64_t(rows) != bytes)
                    return makeError(spec.name + ": row length " + std::to_string(rowLength)
                        + " does not fit its type");
                for (std::int64_t r = 0; r < rows; ++r) {
                    if (!quant::quantizeRow(type, data.data() + r * rowLength,
                            dst + std::uint64_t(r) * *rowBytes, rowLength))
                        return makeError(spec.name + ": cannot quantize");
                }
                ++*done;
                if (progress)
                    progress(*done, total);
                return {};
            });
    }
    summary.tensorCount = specs.size();
    if (auto written = writer.write(outPath); !written)
        return written.error();
    summary.fileBytes = fs::file_size(outPath, ec);
    return summary;
}

} // namespace cw::engine
