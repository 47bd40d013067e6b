// GGUF -> ModelDescription for llama.cpp's "qwen3moe" and "qwen35moe": hyper-parameters from
// <arch>.* keys, every tensor checked against the shape the hyper-parameters imply (as
// llama.cpp's create_tensor does), tokenizer and chat template from tokenizer.* keys.
#include "engine/model_files/gguf_model_loader.h"

#include "engine/model_files/gguf_file.h"
#include "engine/model_files/tensor_names.h"

#include <filesystem>
#include <cstdio>
#include <limits>
#include <set>

namespace cw::engine {
namespace {

namespace g = gguf;
using Shape = std::vector<std::int64_t>;

std::string shapeText(const Shape& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

struct ExpectedTensor {
    std::string name;
    Shape ne;
    bool required = true;
};

class GgufModelBuilder {
public:
    explicit GgufModelBuilder(const GgufFile& file)
        : m_file(file)
    {
    }

    Result<ModelDescription> build()
    {
        auto arch = m_file.requireString(g::kGeneralArchitecture);
        if (!arch)
            return arch.error();
        m_arch = *arch;
        if (m_arch == g::kArchQwen3Moe)
            m_h.architecture = Architecture::Qwen3Moe;
        else if (m_arch == g::kArchQwen35Moe)
            m_h.architecture = Architecture::Qwen35Moe;
        else
            return fail(
                "architecture \"" + m_arch + "\" is not supported (qwen3moe and qwen35moe are)");
        if (auto r = readHyperParameters(); !r)
            return r.error();
        if (auto r = mapTensors(); !r)
            return r.error();
        readTokenizer();
        m_model.sourcePath = m_file.path();
        m_model.name = m_file.getString(g::kGeneralName)
                           .value_or(std::filesystem::path(m_file.path()).stem().string());
        m_model.hparams = m_h;
        m_model.conventions = WeightConventions { true, true, true };
        m_model.storage.push_back(m_file.mapping());
        m_model.metadata["format"] = "gguf";
        m_model.metadata["gguf.version"] = std::to_string(m_file.version());
        m_model.metadata["general.architecture"] = m_arch;
        for (const auto& kv : m_file.metadata()) {
            if (kv.key.rfind("general.", 0) == 0 && kv.value.type() != GgufType::Array) {
                if (const auto* s = kv.value.asString())
                    m_model.metadata[kv.key] = *s;
                else if (const auto i = kv.value.asInt())
                    m_model.metadata[kv.key] = std::to_string(*i);
            }
        }
        return std::move(m_model);
    }

private:
    Error fail(const std::string& problem) const
    {
        return makeError(m_file.path() + ": " + problem);
    }
    std::string key(std::string_view suffix) const { return g::archKey(m_arch, suffix); }

    // A required positive integer no larger than `limit`.
    Result<std::int64_t> positive(std::string_view suffix, std::int64_t limit)
    {
        auto v = m_file.requireInt(key(suffix));
        if (!v)
            return v.error();
        if (*v <= 0 || *v > limit)
            return fail("metadata \"" + key(suffix) + "\" = " + std::to_string(*v)
                + " is out of range (1.." + std::to_string(limit) + ")");
        return *v;
    }
    Result<std::int64_t> positiveOr(
        std::string_view suffix, std::int64_t fallback, std::int64_t limit)
    {
        if (!m_file.find(key(suffix)))
            return fallback;
        return positive(suffix, limit);
    }

    // head_count_kv may be one number or one per layer (0 for recurrent layers).
    Result<std::int64_t> kvHeads()
    {
        const std::string k = key(g::kAttentionHeadCountKv);
        if (const auto list = m_file.getIntArray(k)) {
            std::int64_t heads = 0;
            for (auto v : *list) {
                if (v < 0 || v > 4096 || (v != 0 && heads != 0 && v != heads))
                    return fail("metadata \"" + k + "\" holds inconsistent head counts");
                if (v != 0)
                    heads = v;
            }
            if (heads == 0)
                return fail("metadata \"" + k + "\" has no attention layer");
            return heads;
        }
        return positive(g::kAttentionHeadCountKv, 4096);
    }

    Result<void> readHyperParameters()
    {
        constexpr std::int64_t kBig = std::int64_t(1) << 24;
        const bool qwen35 = m_h.architecture == Architecture::Qwen35Moe;
        auto blocks = positive(g::kBlockCount, 1024);
        auto hidden = positive(g::kEmbeddingLength, 1 << 20);
        auto heads = positive(g::kAttentionHeadCount, 4096);
        auto kv = kvHeads();
        auto experts = positive(g::kExpertCount, 4096);
        auto used = positive(g::kExpertUsedCount, 4096);
        auto expertFfn = positive(g::kExpertFeedForwardLength, kBig);
        auto context = positiveOr(g::kContextLength, 4096, std::int64_t(1) << 30);
        for (const auto* r :
            { &blocks, &hidden, &heads, &kv, &experts, &used, &expertFfn, &context }) {
            if (!*r)
                return r->error();
        }
        auto headDim = positiveOr(g::kAttentionKeyLength, *hidden / *heads, 1 << 16);
        if (!headDim)
            return headDim.error();
        auto valueDim = positiveOr(g::kAttentionValueLength, *headDim, 1 << 16);
        if (!valueDim)
            return valueDim.error();
        if (*valueDim != *headDim)
            return fail("attention.value_length " + std::to_string(*valueDim)
                + " differs from key_length " + std::to_string(*headDim) + " (not supported)");
        auto ropeDim = positiveOr(g::kRopeDimensionCount, *headDim, *headDim);
        if (!ropeDim)
            return ropeDim.error();
        if (*ropeDim % 2 != 0)
            return fail("rope.dimension_count " + std::to_string(*ropeDim) + " is odd");
        if (*heads % *kv != 0)
            return fail("attention.head_count " + std::to_string(*heads)
                + " is not a multiple of head_count_kv " + std::to_string(*kv));
        if (*used > *experts)
            return fail("expert_used_count " + std::to_string(*used) + " exceeds expert_count "
                + std::to_string(*experts));
        const std::int64_t nextn = m_file.getInt(key(g::kNextnPredictLayers)).value_or(0);
        if (nextn < 0 || nextn >= *blocks)
            return fail("nextn_predict_layers " + std::to_string(nextn)
                + " must be below block_count " + std::to_string(*blocks));

        m_h.hiddenSize = *hidden;
        m_h.numLayers = *blocks - nextn;
        m_h.mtpLayers = nextn;
        m_h.contextLength = *context;
        m_h.numHeads = *heads;
        m_h.numKvHeads = *kv;
        m_h.headDim = *headDim;
        m_h.ropeDim = *ropeDim;
        m_h.ropeTheta = m_file.getDouble(key(g::kRopeFreqBase)).value_or(qwen35 ? 1e7 : 1e6);
        m_h.rmsNormEps = m_file.getDouble(key(g::kAttentionLayerNormRmsEpsilon)).value_or(1e-6);
        if (!(m_h.rmsNormEps > 0 && m_h.rmsNormEps < 1))
            return fail("attention.layer_norm_rms_epsilon is out of range");
        m_h.numExperts = *experts;
        m_h.numExpertsPerToken = *used;
        m_h.expertFfnSize = *expertFfn;
        m_h.normTopkProb = m_file.getBool(key(g::kExpertWeightsNorm)).value_or(true);
        m_h.attentionOutputGate = qwen35;
        if (!qwen35) {
            m_h.layerKinds.assign(std::size_t(m_h.numLayers), LayerKind::FullAttention);
            return {};
        }
        auto shared = positive(g::kExpertSharedFeedForwardLength, kBig);
        auto conv = positive(g::kSsmConvKernel, 64);
        auto state = positive(g::kSsmStateSize, 1 << 12);
        auto valueHeads = positive(g::kSsmTimeStepRank, 4096);
        auto keyHeads = positive(g::kSsmGroupCount, 4096);
        auto inner = positive(g::kSsmInnerSize, kBig);
        for (const auto* r : { &shared, &conv, &state, &valueHeads, &keyHeads, &inner }) {
            if (!*r)
                return r->error();
        }
        if (*valueHeads % *keyHeads != 0)
            return fail("ssm.time_step_rank (value heads) " + std::to_string(*valueHeads)
                + " is not a multiple of ssm.group_count (key heads) " + std::to_string(*keyHeads));
        if (*inner != *valueHeads * *state)
            return fail("ssm.inner_size " + std::to_string(*inner)
                + " differs from time_step_rank x state_size "
                + std::to_string(*valueHeads * *state));
        m_h.sharedExpertFfnSize = *shared;
        m_h.linearConvKernel = *conv;
        m_h.linearKeyHeadDim = m_h.linearValueHeadDim = *state;
        m_h.linearNumValueHeads = *valueHeads;
        m_h.linearNumKeyHeads = *keyHeads;
        return readLayerKinds(*blocks);
    }

    Result<void> readLayerKinds(std::int64_t blocks)
    {
        m_h.layerKinds.clear();
        const std::string recurrentKey = key(g::kAttentionRecurrentLayers);
        if (const auto* array = m_file.getArray(recurrentKey)) {
            if (std::int64_t(array->values.size()) != blocks
                && std::int64_t(array->values.size()) != m_h.numLayers)
                return fail("metadata \"" + recurrentKey + "\" has "
                    + std::to_string(array->values.size()) + " entries, block_count is "
                    + std::to_string(blocks));
            for (std::int64_t i = 0; i < m_h.numLayers; ++i) {
                const auto& v = array->values[std::size_t(i)];
                const bool recurrent = v.asBool() ? *v.asBool() : v.asInt().value_or(0) != 0;
                m_h.layerKinds.push_back(
                    recurrent ? LayerKind::GatedDeltaNet : LayerKind::FullAttention);
            }
            return {};
        }
        auto interval = positiveOr(g::kFullAttentionInterval, 4, 1024);
        if (!interval)
            return interval.error();
        for (std::int64_t i = 0; i < m_h.numLayers; ++i)
            m_h.layerKinds.push_back(
                (i + 1) % *interval == 0 ? LayerKind::FullAttention : LayerKind::GatedDeltaNet);
        return {};
    }

    void expect(std::string name, Shape ne, bool required = true)
    {
        m_expected.push_back({ std::move(name), std::move(ne), required });
    }

    void expectAttention(std::int64_t il)
    {
        const auto& h = m_h;
        const std::int64_t q = h.numHeads * h.headDim * (h.attentionOutputGate ? 2 : 1);
        const std::int64_t kv = h.numKvHeads * h.headDim;
        expect(g::blockTensorName(il, g::kAttnQ), { h.hiddenSize, q });
        expect(g::blockTensorName(il, g::kAttnK), { h.hiddenSize, kv });
        expect(g::blockTensorName(il, g::kAttnV), { h.hiddenSize, kv });
        expect(g::blockTensorName(il, g::kAttnOutput), { h.numHeads * h.headDim, h.hiddenSize });
        expect(g::blockTensorName(il, g::kAttnQNorm), { h.headDim });
        expect(g::blockTensorName(il, g::kAttnKNorm), { h.headDim });
    }

    void expectDeltaNet(std::int64_t il)
    {
        const auto& h = m_h;
        const std::int64_t keys = h.linearNumKeyHeads * h.linearKeyHeadDim;
        const std::int64_t values = h.linearNumValueHeads * h.linearValueHeadDim;
        const std::int64_t nv = h.linearNumValueHeads;
        expect(g::blockTensorName(il, g::kAttnQkv), { h.hiddenSize, 2 * keys + values });
        expect(g::blockTensorName(il, g::kAttnGate), { h.hiddenSize, values });
        expect(g::blockTensorName(il, g::kSsmConv1d), { h.linearConvKernel, 2 * keys + values });
        expect(g::blockTensorName(il, g::kSsmDt, "bias"), { nv });
        expect(g::blockTensorName(il, g::kSsmA, ""), { nv });
        expect(g::blockTensorName(il, g::kSsmBeta), { h.hiddenSize, nv });
        expect(g::blockTensorName(il, g::kSsmAlpha), { h.hiddenSize, nv });
        expect(g::blockTensorName(il, g::kSsmNorm), { h.linearValueHeadDim });
        expect(g::blockTensorName(il, g::kSsmOut), { values, h.hiddenSize });
    }

    void expectMoe(std::int64_t il)
    {
        const auto& h = m_h;
        const std::int64_t e = h.numExperts, ff = h.expertFfnSize, d = h.hiddenSize;
        expect(g::blockTensorName(il, g::kFfnGateInp), { d, e });
        if (m_file.findTensor(g::blockTensorName(il, g::kFfnGateUpExps))) {
            expect(g::blockTensorName(il, g::kFfnGateUpExps), { d, 2 * ff, e });
        } else {
            expect(g::blockTensorName(il, g::kFfnGateExps), { d, ff, e });
            expect(g::blockTensorName(il, g::kFfnUpExps), { d, ff, e });
        }
        expect(g::blockTensorName(il, g::kFfnDownExps), { ff, d, e });
        if (h.architecture == Architecture::Qwen35Moe) {
            const std::int64_t sff = h.sharedExpertFfnSize;
            expect(g::blockTensorName(il, g::kFfnGateInpShexp), { d });
            expect(g::blockTensorName(il, g::kFfnGateShexp), { d, sff });
            expect(g::blockTensorName(il, g::kFfnUpShexp), { d, sff });
            expect(g::blockTensorName(il, g::kFfnDownShexp), { sff, d });
        }
    }

    void expectAll(std::int64_t vocab)
    {
        const bool qwen35 = m_h.architecture == Architecture::Qwen35Moe;
        const std::int64_t d = m_h.hiddenSize;
        expect(g::tensorName(g::kTokenEmbd), { d, vocab });
        expect(g::tensorName(g::kOutputNorm), { d });
        expect(g::tensorName(g::kOutput), { d, vocab }, false);
        for (std::int64_t il = 0; il < m_h.numLayers + m_h.mtpLayers; ++il) {
            const bool mtp = il >= m_h.numLayers;
            expect(g::blockTensorName(il, g::kAttnNorm), { d });
            expect(g::blockTensorName(il, qwen35 ? g::kPostAttentionNorm : g::kFfnNorm), { d });
            if (mtp || m_h.layerKinds[std::size_t(il)] == LayerKind::FullAttention)
                expectAttention(il);
            else
                expectDeltaNet(il);
            expectMoe(il);
            if (mtp) {
                expect(g::blockTensorName(il, g::kNextnEhProj), { 2 * d, d });
                expect(g::blockTensorName(il, g::kNextnEnorm), { d });
                expect(g::blockTensorName(il, g::kNextnHnorm), { d });
                expect(g::blockTensorName(il, g::kNextnEmbedTokens), { d, vocab }, false);
                expect(g::blockTensorName(il, g::kNextnSharedHeadHead), { d, vocab }, false);
                expect(g::blockTensorName(il, g::kNextnSharedHeadNorm), { d }, false);
            }
        }
    }

    TensorView viewOf(const GgufTensorInfo& info) const
    {
        TensorView view;
        view.name = info.name;
        view.type = info.type;
        view.nDims = info.nDims;
        view.ne = info.ne;
        view.data = info.data;
        view.bytes = info.bytes;
        return view;
    }

    // Fused [d, 2*ff, E] gate+up experts become two 3-D views whose expert slices point into it.
    void splitGateUp(const GgufTensorInfo& info, std::int64_t layer)
    {
        const std::int64_t experts = info.ne[2];
        const std::uint64_t expertBytes = info.bytes / std::uint64_t(experts);
        for (int part = 0; part < 2; ++part) {
            TensorView view = viewOf(info);
            view.name = g::blockTensorName(layer, part == 0 ? g::kFfnGateExps : g::kFfnUpExps);
            view.ne = { info.ne[0], info.ne[1] / 2, experts, 1 };
            view.bytes = info.bytes / 2;
            for (std::int64_t e = 0; e < experts; ++e)
                view.slices.push_back(info.data + expertBytes * std::uint64_t(e)
                    + std::uint64_t(part) * expertBytes / 2);
            view.data = view.slices.front();
            m_model.tensors[view.name] = std::move(view);
        }
    }

    Result<void> mapTensors()
    {
        const auto* embd = m_file.findTensor(g::tensorName(g::kTokenEmbd));
        if (!embd)
            return fail("tensor " + g::tensorName(g::kTokenEmbd) + " is missing");
        if (embd->nDims != 2)
            return fail("tensor " + g::tensorName(g::kTokenEmbd) + " should have 2 dimensions");
        m_h.vocabSize = embd->ne[1];
        if (const auto vocab = m_file.getInt(key(g::kVocabSize)); vocab && *vocab != m_h.vocabSize)
            return fail("vocab_size " + std::to_string(*vocab) + " differs from token_embd's "
                + std::to_string(m_h.vocabSize) + " rows");
        expectAll(m_h.vocabSize);
        std::set<std::string> known;
        for (const auto& e : m_expected) {
            known.insert(e.name);
            const auto* info = m_file.findTensor(e.name);
            if (!info) {
                if (e.required)
                    return fail("tensor " + e.name + " is missing (architecture " + m_arch + ")");
                continue;
            }
            Shape actual(info->ne.begin(), info->ne.begin() + info->nDims);
            Shape wanted = e.ne;
            while (actual.size() > wanted.size() && actual.back() == 1)
                actual.pop_back();
            if (actual != wanted)
                return fail("tensor " + e.name + " has shape " + shapeText(actual)
                    + ", the hyper-parameters imply " + shapeText(wanted));
            if (e.name.find(g::kFfnGateUpExps) != std::string::npos) {
                int layer = 0;
                std::sscanf(e.name.c_str(), "blk.%d.", &layer);
                splitGateUp(*info, layer);
            } else {
                m_model.tensors[e.name] = viewOf(*info);
            }
        }
        for (const auto& info : m_file.tensors()) {
            if (!known.count(info.name))
                return fail("unexpected tensor " + info.name + " for architecture " + m_arch);
        }
        m_h.tieWordEmbeddings = m_file.findTensor(g::tensorName(g::kOutput)) == nullptr;
        return {};
    }

    void readTokenizer()
    {
        auto& t = m_model.tokenizer;
        t.ggmlTokens
            = m_file.getStringArray(g::kTokenizerTokens).value_or(std::vector<std::string> {});
        t.ggmlMerges
            = m_file.getStringArray(g::kTokenizerMerges).value_or(std::vector<std::string> {});
        if (const auto types = m_file.getIntArray(g::kTokenizerTokenType)) {
            for (auto v : *types)
                t.ggmlTokenTypes.push_back(std::int32_t(v));
        }
        t.ggmlPre = m_file.getString(g::kTokenizerPre).value_or("");
        const auto id = [&](std::string_view k) -> std::optional<std::int32_t> {
            const auto v = m_file.getInt(k);
            if (!v || *v < 0 || *v > std::numeric_limits<std::int32_t>::max())
                return std::nullopt;
            return std::int32_t(*v);
        };
        t.eosId = id(g::kTokenizerEosId);
        t.padId = id(g::kTokenizerPadId);
        t.bosId = id(g::kTokenizerBosId);
        m_model.chatTemplate = m_file.getString(g::kTokenizerChatTemplate).value_or("");
        if (const auto model = m_file.getString(g::kTokenizerModel))
            m_model.metadata["tokenizer.ggml.model"] = *model;
    }

    const GgufFile& m_file;
    std::string m_arch;
    HyperParameters m_h;
    ModelDescription m_model;
    std::vector<ExpectedTensor> m_expected;
};

} // namespace

Result<ModelDescription> describeGgufModel(const GgufFile& file)
{
    return GgufModelBuilder(file).build();
}

Result<ModelDescription> openGgufModel(const std::string& path)
{
    auto file = GgufFile::open(path);
    if (!file)
        return file.error();
    return describeGgufModel(*file);
}

} // namespace cw::engine
