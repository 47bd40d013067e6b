// synthesizeGguf: random-weight GGUF files with the exact geometry of a preset.
#include "engine/model_files/gguf_writer.h"
#include "engine/model_files/hf_gguf_layout.h"
#include "engine/model_files/model_presets.h"
#include "kernels/cpu/quant/quant_blocks.h"
#include "kernels/cpu/quant/quantize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>

namespace cw::engine {

namespace {

using kernels::TensorType;
namespace quant = kernels::quant;

std::uint64_t splitmix64(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// xoshiro256**: fast, and seeded per tensor from the user's seed and the tensor's name, so a
// tensor's content does not depend on the order tensors are written in.
class Rng {
public:
    Rng(std::uint64_t seed, const std::string& name)
    {
        std::uint64_t h = 1469598103934665603ull ^ seed;
        for (char c : name)
            h = (h ^ std::uint64_t(std::uint8_t(c))) * 1099511628211ull;
        std::uint64_t state = h ^ (seed * 0x9e3779b97f4a7c15ull);
        for (auto& s : m_s)
            s = splitmix64(state);
    }
    std::uint64_t next()
    {
        const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const std::uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }
    float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f); } // [0, 1)
    float symmetric() { return 2.0f * uniform() - 1.0f; } // [-1, 1)

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::array<std::uint64_t, 4> m_s {};
};

float randomValue(GgufTensorRole role, Rng& rng)
{
    switch (role) {
    case GgufTensorRole::ZeroCentredNorm: // GGUF stores 1 + w
    case GgufTensorRole::PlainNorm:
        return 1.0f + 0.1f * rng.symmetric();
    case GgufTensorRole::SsmA: // -exp(A_log), A_log in [0, log 16]
        return -(1.0f + 15.0f * rng.uniform());
    case GgufTensorRole::SsmDtBias:
        return rng.symmetric();
    case GgufTensorRole::SsmConv:
        return 0.5f * rng.symmetric();
    default:
        return 0.04f * rng.symmetric(); // weights: std ~0.023
    }
}

// Where a block keeps its fp16 scales, and the size they should have so the weights come out
// at about +-0.04 (and roughly centred for the types with a min).
struct BlockScales {
    TensorType type;
    std::uint32_t blockBytes;
    std::array<std::uint32_t, 2> offsets;
    std::array<float, 2> targets;
    int count;
};

constexpr BlockScales kBlockScales[] = {
    { TensorType::Q4_0, 18, { 0, 0 }, { 0.005f, 0 }, 1 },
    { TensorType::Q4_1, 20, { 0, 2 }, { 0.005f, -0.04f }, 2 },
    { TensorType::Q5_0, 22, { 0, 0 }, { 0.0025f, 0 }, 1 },
    { TensorType::Q5_1, 24, { 0, 2 }, { 0.0025f, -0.04f }, 2 },
    { TensorType::Q8_0, 34, { 0, 0 }, { 0.0003f, 0 }, 1 },
    { TensorType::Q2_K, 84, { 80, 82 }, { 0.001f, 0.0015f }, 2 },
    { TensorType::Q3_K, 110, { 108, 0 }, { 0.0003f, 0 }, 1 },
    { TensorType::Q4_K, 144, { 0, 2 }, { 4e-5f, 3e-4f }, 2 },
    { TensorType::Q5_K, 176, { 0, 2 }, { 2e-5f, 3.1e-4f }, 2 },
    { TensorType::Q6_K, 210, { 208, 0 }, { 1e-5f, 0 }, 1 },
    { TensorType::IQ4_XS, 136, { 0, 0 }, { 1e-5f, 0 }, 1 },
};

void fillRandomBytes(std::byte* dst, std::uint64_t bytes, Rng& rng)
{
    std::uint64_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const std::uint64_t r = rng.next();
        std::memcpy(dst + i, &r, 8);
    }
    if (i < bytes) {
        const std::uint64_t r = rng.next();
        std::memcpy(dst + i, &r, std::size_t(bytes - i));
    }
}

// Per expert of a router: its row's scale under `skew`. A router row with a larger norm gives
// logits of a wider spread, so its expert is among the top-k more often: the expert at rank r
// (a per-layer shuffle, so each layer has its own hot experts) gets (1 + r)^-skew. Empty when
// routing stays uniform.
std::vector<float> routerRowScales(const GgufTensorSpec& spec, std::int64_t experts,
    double skew, std::uint64_t seed)
{
    if (skew <= 0.0 || spec.role != GgufTensorRole::Router || spec.ne.size() < 2
        || spec.ne[1] != experts || experts < 2)
        return {};
    std::vector<int> rank(static_cast<std::size_t>(experts));
    std::iota(rank.begin(), rank.end(), 0);
    Rng shuffle(seed ^ 0x5ce77e4ull, spec.name + "/ranks");
    for (std::size_t i = rank.size() - 1; i > 0; --i)
        std::swap(rank[i], rank[std::size_t(shuffle.next() % (i + 1))]);
    std::vector<float> scales(rank.size());
    for (std::size_t e = 0; e < rank.size(); ++e)
        scales[e] = float(std::pow(1.0 + double(rank[e]), -skew));
    return scales;
}

Result<void> fillTensor(const GgufTensorSpec& spec, TensorType type, std::uint64_t seed,
    const std::vector<float>& rowScales, std::byte* dst, std::uint64_t bytes)
{
    Rng rng(seed, spec.name);
    const auto n = std::uint64_t(spec.elements());
    if (type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16) {
        const auto rowLength = std::uint64_t(spec.ne[0]);
        for (std::uint64_t i = 0; i < n; ++i) {
            float v = randomValue(spec.role, rng);
            if (!rowScales.empty())
                v *= rowScales[std::size_t(i / rowLength)];
            if (type == TensorType::F32) {
                std::memcpy(dst + 4 * i, &v, 4);
            } else {
                const std::uint16_t bits
                    = type == TensorType::F16 ? quant::fp32ToFp16(v) : quant::fp32ToBf16(v);
                std::memcpy(dst + 2 * i, &bits, 2);
            }
        }
        return {};
    }
    const BlockScales* layout = nullptr;
    for (const auto& candidate : kBlockScales) {
        if (candidate.type == type)
            layout = &candidate;
    }
    if (!layout || bytes % layout->blockBytes != 0)
        return makeError(spec.name + ": cannot synthesise blocks of this type");
    if (!rowScales.empty())
        return makeError(spec.name + ": a skewed router needs a float router tensor");
    fillRandomBytes(dst, bytes, rng);
    // Eight fp16 values around each target; each block picks one at random.
    std::array<std::array<quant::Half, 8>, 2> table {};
    for (int s = 0; s < layout->count; ++s) {
        for (int k = 0; k < 8; ++k)
            table[std::size_t(s)][std::size_t(k)] = quant::fp32ToFp16(
                layout->targets[std::size_t(s)] * (0.75f + 0.5f * float(k) / 7));
    }
    for (std::uint64_t block = 0; block < bytes; block += layout->blockBytes) {
        const std::uint64_t r = rng.next();
        for (int s = 0; s < layout->count; ++s) {
            const quant::Half h = table[std::size_t(s)][(r >> (3 * s)) & 7u];
            std::memcpy(dst + block + layout->offsets[std::size_t(s)], &h, 2);
        }
    }
    return {};
}

std::string chatMlTemplate()
{
    return "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + "
           "message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if "
           "add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
}

} // namespace

Result<SynthSummary> synthesizeGguf(const ModelPreset& preset, std::string_view mix,
    std::uint64_t seed, const std::string& outPath,
    const std::function<void(std::size_t, std::size_t)>& progress, double routerSkew)
{
    if (!(routerSkew >= 0.0 && routerSkew <= 4.0))
        return makeError("the router skew must be between 0 and 4");
    const auto fileType = llamaFileType(mix);
    if (!fileType || !quant::isKnownMix(mix))
        return makeError("unknown quantization \"" + std::string(mix)
            + "\" (use f32, f16, bf16, q8_0, q4_0, q4_k_s, q4_k_m, q5_k_m, q6_k ...)");
    const HyperParameters& h = preset.hparams;
    const auto specs = ggufTensorLayout(h);

    GgufWriter writer;
    setGgufHyperParameters(
        writer, h, { preset.name + " (random weights)", *fileType, preset.mropeSections });
    setGgufVocabulary(writer,
        syntheticQwenVocabulary(h.vocabSize, preset.firstSpecialTokenId, preset.tokenizerPre),
        chatMlTemplate());

    std::vector<std::string> names;
    for (const auto& spec : specs)
        names.push_back(spec.name);
    quant::QuantizationMix quantMix(std::string(mix), names, h.numLayers, h.numExperts);
    SynthSummary summary;
    const std::size_t total = specs.size();
    auto done = std::make_shared<std::size_t>(0);
    for (const auto& spec : specs) {
        const TensorType type
            = quantMix.next(spec.name, spec.effectiveDims(), spec.ne[0], TensorType::F32);
        const auto traits = kernels::tensorTypeTraits(std::uint32_t(type));
        summary.tensorsPerType[std::string(traits ? traits->name : "?")]++;
        auto scales = routerRowScales(spec, h.numExperts, routerSkew, seed);
        writer.addTensor(spec.name, type, spec.ne,
            [spec, type, seed, scales = std::move(scales), done, total, &progress](
                std::byte* dst, std::uint64_t bytes) {
                auto filled = fillTensor(spec, type, seed, scales, dst, bytes);
                ++*done;
                if (progress)
                    progress(*done, total);
                return filled;
            });
    }
    summary.tensorCount = specs.size();
    if (auto written = writer.write(outPath); !written)
        return written.error();
    std::error_code ec;
    summary.fileBytes = std::filesystem::file_size(outPath, ec);
    return summary;
}

} // namespace cw::engine
