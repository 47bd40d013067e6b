#include "tiny_gguf_model.h"

#include "engine/model_files/gguf_writer.h"
#include "engine/model_files/tensor_names.h"
#include "kernels/cpu/quant/quantize.h"

#include <algorithm>
#include <random>

namespace cw::test {
namespace {

using namespace cw::engine;
namespace g = cw::engine::gguf;
using Shape = std::vector<std::int64_t>;

constexpr std::int64_t kHidden = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kExperts = 4,
                       kUsed = 2, kFfn = 32, kShared = 32, kVocab = 128, kLayers = 4, kKeyHeads = 2,
                       kValueHeads = 4, kState = 16, kConv = 4;

struct Planned {
    std::string name;
    Shape ne;
};

std::vector<Planned> plan(const TinyGgufOptions& o)
{
    const bool qwen35 = o.architecture != "qwen3moe";
    std::vector<Planned> t;
    auto add = [&](std::string name, Shape ne) { t.push_back({ std::move(name), std::move(ne) }); };
    add(g::tensorName(g::kTokenEmbd), { kHidden, kVocab });
    const std::int64_t blocks = kLayers + (qwen35 && o.withMtp ? 1 : 0);
    for (std::int64_t il = 0; il < blocks; ++il) {
        const bool mtp = il >= kLayers;
        const bool attention = !qwen35 || mtp || (il + 1) % 4 == 0;
        add(g::blockTensorName(il, g::kAttnNorm), { kHidden });
        if (attention) {
            add(g::blockTensorName(il, g::kAttnQ),
                { kHidden, kHeads * kHeadDim * (qwen35 ? 2 : 1) });
            add(g::blockTensorName(il, g::kAttnK), { kHidden, kKvHeads * kHeadDim });
            add(g::blockTensorName(il, g::kAttnV), { kHidden, kKvHeads * kHeadDim });
            add(g::blockTensorName(il, g::kAttnOutput), { kHeads * kHeadDim, kHidden });
            add(g::blockTensorName(il, g::kAttnQNorm), { kHeadDim });
            add(g::blockTensorName(il, g::kAttnKNorm), { kHeadDim });
        } else {
            const std::int64_t keys = kKeyHeads * kState, values = kValueHeads * kState;
            add(g::blockTensorName(il, g::kAttnQkv), { kHidden, 2 * keys + values });
            add(g::blockTensorName(il, g::kAttnGate), { kHidden, values });
            add(g::blockTensorName(il, g::kSsmConv1d), { kConv, 2 * keys + values });
            add(g::blockTensorName(il, g::kSsmDt, "bias"), { kValueHeads });
            add(g::blockTensorName(il, g::kSsmA, ""), { kValueHeads });
            add(g::blockTensorName(il, g::kSsmBeta), { kHidden, kValueHeads });
            add(g::blockTensorName(il, g::kSsmAlpha), { kHidden, kValueHeads });
            add(g::blockTensorName(il, g::kSsmNorm), { kState });
            add(g::blockTensorName(il, g::kSsmOut), { values, kHidden });
        }
        add(g::blockTensorName(il, qwen35 ? g::kPostAttentionNorm : g::kFfnNorm), { kHidden });
        add(g::blockTensorName(il, g::kFfnGateInp), { kHidden, kExperts });
        if (o.fuseGateUp) {
            add(g::blockTensorName(il, g::kFfnGateUpExps), { kHidden, 2 * kFfn, kExperts });
        } else {
            add(g::blockTensorName(il, g::kFfnGateExps), { kHidden, kFfn, kExperts });
            add(g::blockTensorName(il, g::kFfnUpExps), { kHidden, kFfn, kExperts });
        }
        add(g::blockTensorName(il, g::kFfnDownExps), { kFfn, kHidden, kExperts });
        if (qwen35) {
            add(g::blockTensorName(il, g::kFfnGateInpShexp), { kHidden });
            add(g::blockTensorName(il, g::kFfnGateShexp), { kHidden, kShared });
            add(g::blockTensorName(il, g::kFfnUpShexp), { kHidden, kShared });
            add(g::blockTensorName(il, g::kFfnDownShexp), { kShared, kHidden });
        }
        if (mtp) {
            add(g::blockTensorName(il, g::kNextnEhProj), { 2 * kHidden, kHidden });
            add(g::blockTensorName(il, g::kNextnEnorm), { kHidden });
            add(g::blockTensorName(il, g::kNextnHnorm), { kHidden });
            add(g::blockTensorName(il, g::kNextnSharedHeadNorm), { kHidden });
        }
    }
    add(g::tensorName(g::kOutputNorm), { kHidden });
    add(g::tensorName(g::kOutput), { kHidden, kVocab });
    for (const auto& name : o.extra)
        add(name, { 4 });
    t.erase(std::remove_if(t.begin(), t.end(),
                [&](const Planned& p) {
                    return std::find(o.skip.begin(), o.skip.end(), p.name) != o.skip.end();
                }),
        t.end());
    for (auto& p : t) {
        if (const auto it = o.reshape.find(p.name); it != o.reshape.end())
            p.ne = it->second;
    }
    return t;
}

void setMetadata(GgufWriter& w, const TinyGgufOptions& o, std::int64_t blocks)
{
    const std::string a = o.architecture;
    const bool qwen35 = a != "qwen3moe";
    w.setString(std::string(g::kGeneralArchitecture), a);
    w.setString(std::string(g::kGeneralName), "tiny-" + a);
    w.setUint32(std::string(g::kGeneralQuantizationVersion), 2);
    w.setUint32(g::archKey(a, g::kBlockCount), std::uint32_t(blocks));
    w.setUint32(g::archKey(a, g::kContextLength), 4096);
    w.setUint32(g::archKey(a, g::kEmbeddingLength), kHidden);
    w.setUint32(g::archKey(a, g::kAttentionHeadCount), kHeads);
    w.setUint32(g::archKey(a, g::kAttentionHeadCountKv), kKvHeads);
    w.setUint32(g::archKey(a, g::kAttentionKeyLength), kHeadDim);
    w.setUint32(g::archKey(a, g::kAttentionValueLength), kHeadDim);
    w.setFloat32(g::archKey(a, g::kRopeFreqBase), 1000000.0f);
    w.setUint32(g::archKey(a, g::kRopeDimensionCount), qwen35 ? kHeadDim / 4 : kHeadDim);
    w.setFloat32(g::archKey(a, g::kAttentionLayerNormRmsEpsilon), 1e-6f);
    w.setUint32(g::archKey(a, g::kExpertCount), kExperts);
    w.setUint32(g::archKey(a, g::kExpertUsedCount), kUsed);
    w.setUint32(g::archKey(a, g::kExpertFeedForwardLength), kFfn);
    if (qwen35) {
        w.setUint32(g::archKey(a, g::kExpertSharedFeedForwardLength), kShared);
        w.setUint32(g::archKey(a, g::kSsmConvKernel), kConv);
        w.setUint32(g::archKey(a, g::kSsmStateSize), kState);
        w.setUint32(g::archKey(a, g::kSsmGroupCount), kKeyHeads);
        w.setUint32(g::archKey(a, g::kSsmTimeStepRank), kValueHeads);
        w.setUint32(g::archKey(a, g::kSsmInnerSize), kValueHeads * kState);
        w.setUint32(g::archKey(a, g::kFullAttentionInterval), 4);
        if (o.withMtp)
            w.setUint32(g::archKey(a, g::kNextnPredictLayers), 1);
    }
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;
    for (int i = 0; i < kVocab; ++i) {
        tokens.push_back(i < 26 ? std::string(1, char('a' + i)) : "tok" + std::to_string(i));
        types.push_back(i >= 120 ? 3 : 1);
    }
    tokens[120] = "<|endoftext|>";
    tokens[121] = "<|im_start|>";
    tokens[122] = "<|im_end|>";
    w.setString(std::string(g::kTokenizerModel), "gpt2");
    w.setString(std::string(g::kTokenizerPre), "qwen2");
    w.setStringArray(std::string(g::kTokenizerTokens), tokens);
    w.setInt32Array(std::string(g::kTokenizerTokenType), types);
    w.setStringArray(std::string(g::kTokenizerMerges), { "a b", "ab c" });
    w.setUint32(std::string(g::kTokenizerEosId), 122);
    w.setUint32(std::string(g::kTokenizerPadId), 120);
    w.setUint32(std::string(g::kTokenizerBosId), 120);
    w.setString(std::string(g::kTokenizerChatTemplate),
        "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content "
        "}}<|im_end|>\n{% endfor %}");
}

Result<GgufWriter> makeWriter(const TinyGgufOptions& o)
{
    const auto tensors = plan(o);
    const std::int64_t blocks = kLayers + (o.architecture != "qwen3moe" && o.withMtp ? 1 : 0);
    GgufWriter w;
    setMetadata(w, o, blocks);
    std::vector<std::string> names;
    for (const auto& t : tensors)
        names.push_back(t.name);
    kernels::quant::QuantizationMix mix(o.mix, names, blocks, kExperts);
    std::mt19937 rng(42);
    std::normal_distribution<float> dist(0.0f, 0.5f);
    for (const auto& t : tensors) {
        const auto type = mix.next(t.name, int(t.ne.size()), t.ne[0], kernels::TensorType::F32);
        std::int64_t elements = 1;
        for (auto n : t.ne)
            elements *= n;
        std::vector<float> values(static_cast<std::size_t>(elements));
        for (auto& v : values)
            v = dist(rng);
        const auto rowBytes = kernels::rowBytes(type, std::uint64_t(t.ne[0]));
        if (!rowBytes)
            return makeError("tiny model: " + t.name + " cannot be stored as the mix asks");
        std::vector<std::byte> bytes(std::size_t(*rowBytes * std::uint64_t(elements / t.ne[0])));
        for (std::int64_t r = 0; r < elements / t.ne[0]; ++r) {
            if (!kernels::quant::quantizeRow(type, values.data() + r * t.ne[0],
                    bytes.data() + std::size_t(r) * *rowBytes, t.ne[0]))
                return makeError("tiny model: cannot quantize " + t.name);
        }
        w.addTensor(t.name, type, t.ne, std::move(bytes));
    }
    return w;
}

} // namespace

Result<void> writeTinyGguf(const std::string& path, const TinyGgufOptions& options)
{
    auto w = makeWriter(options);
    if (!w)
        return w.error();
    return w->write(path);
}

Result<std::vector<std::byte>> tinyGgufBytes(const TinyGgufOptions& options)
{
    auto w = makeWriter(options);
    if (!w)
        return w.error();
    return w->toBytes();
}

} // namespace cw::test
