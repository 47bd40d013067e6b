// llama.cpp's quantization mixes (src/llama-quant.cpp: tensor_allows_quantization,
// tensor_get_category, llama_tensor_get_type_impl, tensor_type_fallback) for the ftypes whose
// tensor types this engine can write. Rules for other ftypes (IQ*, Q2_K, Q3_K) are not here.
#include "kernels/cpu/quant/quantize.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace cw::kernels::quant {
namespace {

enum class Mix {
    F32,
    F16,
    BF16,
    Q8_0,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q4_K_S,
    Q4_K_M,
    Q5_K_S,
    Q5_K_M,
    Q6_K
};

struct MixEntry {
    std::string_view name;
    Mix mix;
    TensorType base;
};

constexpr std::array kMixes {
    MixEntry { "f32", Mix::F32, TensorType::F32 },
    MixEntry { "f16", Mix::F16, TensorType::F16 },
    MixEntry { "bf16", Mix::BF16, TensorType::BF16 },
    MixEntry { "q8_0", Mix::Q8_0, TensorType::Q8_0 },
    MixEntry { "q4_0", Mix::Q4_0, TensorType::Q4_0 },
    MixEntry { "q4_1", Mix::Q4_1, TensorType::Q4_1 },
    MixEntry { "q5_0", Mix::Q5_0, TensorType::Q5_0 },
    MixEntry { "q5_1", Mix::Q5_1, TensorType::Q5_1 },
    MixEntry { "q4_k_s", Mix::Q4_K_S, TensorType::Q4_K },
    MixEntry { "q4_k_m", Mix::Q4_K_M, TensorType::Q4_K },
    MixEntry { "q5_k_s", Mix::Q5_K_S, TensorType::Q5_K },
    MixEntry { "q5_k_m", Mix::Q5_K_M, TensorType::Q5_K },
    MixEntry { "q6_k", Mix::Q6_K, TensorType::Q6_K },
};

const MixEntry* findMix(std::string_view name)
{
    std::string lower(name);
    for (auto& c : lower)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& entry : kMixes) {
        if (entry.name == lower)
            return &entry;
    }
    return nullptr;
}

bool contains(const std::string& s, std::string_view part)
{
    return s.find(part) != std::string::npos;
}

bool endsWith(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size()
        && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

enum class Category {
    TokenEmbd,
    AttnQ,
    AttnV,
    AttnK,
    AttnQkv,
    AttnKvB,
    AttnOutput,
    FfnUp,
    FfnGate,
    FfnDown,
    Output,
    Other
};

Category categoryOf(const std::string& name)
{
    if (name == "output.weight")
        return Category::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight")
        return Category::TokenEmbd;
    if (contains(name, "attn_qkv.weight"))
        return Category::AttnQkv;
    if (contains(name, "attn_kv_b.weight"))
        return Category::AttnKvB;
    if (contains(name, "attn_v.weight"))
        return Category::AttnV;
    if (contains(name, "attn_k.weight"))
        return Category::AttnK;
    if (contains(name, "attn_q.weight"))
        return Category::AttnQ;
    if (contains(name, "attn_output.weight"))
        return Category::AttnOutput;
    if (contains(name, "ffn_up"))
        return Category::FfnUp;
    if (contains(name, "ffn_gate"))
        return Category::FfnGate;
    if (contains(name, "ffn_down"))
        return Category::FfnDown;
    return Category::Other;
}

bool isAttnVLike(Category c)
{
    return c == Category::AttnV || c == Category::AttnQkv || c == Category::AttnKvB;
}

// The subset of tensor_allows_quantization that concerns the tensors of these models.
bool allowsQuantization(const std::string& name, int nDims)
{
    if (nDims < 2 || !endsWith(name, "weight"))
        return false;
    for (std::string_view excluded :
        { "_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d", "altup", "laurel",
            "per_layer_model_proj", "attn_rel_b.weight", "position_embd", "token_types.weight" }) {
        if (contains(name, excluded))
            return false;
    }
    return true;
}

bool useMoreBits(std::int64_t iLayer, std::int64_t nLayers)
{
    return iLayer < nLayers / 8 || iLayer >= 7 * nLayers / 8 || (iLayer - nLayers / 8) % 3 == 2;
}

std::int64_t layerOf(const std::string& name, std::int64_t fallback)
{
    int layer = 0;
    if (std::sscanf(name.c_str(), "blk.%d.", &layer) == 1)
        return layer;
    return fallback;
}

std::uint32_t blockSizeOf(TensorType type)
{
    return tensorTypeTraits(std::uint32_t(type))->blockSize;
}

TensorType fallbackFor(TensorType type, std::int64_t ne0)
{
    if (ne0 % blockSizeOf(type) == 0)
        return type;
    TensorType other = type;
    switch (type) {
    case TensorType::Q4_K:
        other = TensorType::Q5_0;
        break;
    case TensorType::Q5_K:
        other = TensorType::Q5_1;
        break;
    case TensorType::Q6_K:
        other = TensorType::Q8_0;
        break;
    default:
        break;
    }
    return ne0 % blockSizeOf(other) == 0 ? other : TensorType::F16;
}

bool isQuantized(TensorType type)
{
    return type != TensorType::F32 && type != TensorType::F16 && type != TensorType::BF16;
}

} // namespace

bool isKnownMix(std::string_view mix)
{
    return findMix(mix) != nullptr;
}

TensorType mixBaseType(std::string_view mix)
{
    const auto* entry = findMix(mix);
    return entry ? entry->base : TensorType::F32;
}

TensorType quantizedTypeForMix(
    std::string_view mixName, const std::string& name, const MixTensorContext& c)
{
    const auto* entry = findMix(mixName);
    if (!entry || !allowsQuantization(name, c.nDims))
        return c.sourceType;
    TensorType type = entry->base;
    if (!isQuantized(type))
        return type;
    const Mix mix = entry->mix;
    const Category category = categoryOf(name);
    const bool eightExperts = c.nExperts == 8;
    if (category == Category::Output || (c.tiedEmbeddings && category == Category::TokenEmbd)) {
        if (c.ne0 % blockSizeOf(type) != 0)
            type = TensorType::Q8_0;
        else if (type != TensorType::Q8_0)
            type = TensorType::Q6_K;
    } else if (category == Category::TokenEmbd) {
        // The base type (only IQ/ternary mixes change it).
    } else if (isAttnVLike(category)) {
        if ((mix == Mix::Q4_K_M || mix == Mix::Q5_K_M)
            && useMoreBits(c.attentionVIndex, c.attentionVCount))
            type = TensorType::Q6_K;
        else if (mix == Mix::Q4_K_S && c.attentionVIndex < 4)
            type = TensorType::Q5_K;
        if (eightExperts)
            type = TensorType::Q8_0;
    } else if (category == Category::AttnK) {
        if (eightExperts)
            type = TensorType::Q8_0;
    } else if (category == Category::FfnDown) {
        const std::int64_t nLayers = c.nLayers;
        const std::int64_t iLayer = c.nExperts > 1 ? layerOf(name, c.ffnDownIndex) : c.ffnDownIndex;
        if (mix == Mix::Q4_K_M || mix == Mix::Q5_K_M) {
            if (useMoreBits(iLayer, nLayers))
                type = TensorType::Q6_K;
        } else if (mix == Mix::Q4_K_S && iLayer < nLayers / 8) {
            type = TensorType::Q5_K;
        }
    } else if (category == Category::AttnOutput) {
        if (eightExperts && (mix == Mix::Q4_K_S || mix == Mix::Q4_K_M))
            type = TensorType::Q5_K;
    } else if (category == Category::AttnQkv) {
        // Unreachable (attn_qkv is attn_v-like above), as in llama.cpp.
    }
    return fallbackFor(type, c.ne0);
}

QuantizationMix::QuantizationMix(std::string mix, const std::vector<std::string>& allTensorNames,
    std::int64_t nLayersAll, std::int64_t nExperts)
    : m_mix(std::move(mix))
{
    m_context.nLayers = nLayersAll;
    m_context.nExperts = nExperts;
    m_context.tiedEmbeddings = true;
    for (const auto& name : allTensorNames) {
        const Category category = categoryOf(name);
        if (isAttnVLike(category))
            ++m_context.attentionVCount;
        if (category == Category::Output)
            m_context.tiedEmbeddings = false;
    }
}

TensorType QuantizationMix::next(
    const std::string& name, int nDims, std::int64_t ne0, TensorType sourceType)
{
    m_context.nDims = nDims;
    m_context.ne0 = ne0;
    m_context.sourceType = sourceType;
    const TensorType type = quantizedTypeForMix(m_mix, name, m_context);
    // llama.cpp advances its counters only for tensors it may quantize.
    if (isKnownMix(m_mix) && isQuantized(mixBaseType(m_mix)) && allowsQuantization(name, nDims)) {
        const Category category = categoryOf(name);
        if (isAttnVLike(category))
            ++m_context.attentionVIndex;
        else if (category == Category::FfnDown)
            ++m_context.ffnDownIndex;
    }
    return type;
}

} // namespace cw::kernels::quant
