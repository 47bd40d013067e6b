#include "engine/model_files/hf_gguf_layout.h"

#include "engine/model_files/tensor_names.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace cw::engine {

namespace {

using gguf::archKey;
using gguf::blockTensorName;
using gguf::tensorName;

std::string utf8(std::uint32_t codePoint)
{
    std::string out;
    if (codePoint < 0x80) {
        out.push_back(char(codePoint));
    } else if (codePoint < 0x800) {
        out.push_back(char(0xc0 | (codePoint >> 6)));
        out.push_back(char(0x80 | (codePoint & 0x3f)));
    } else {
        out.push_back(char(0xe0 | (codePoint >> 12)));
        out.push_back(char(0x80 | ((codePoint >> 6) & 0x3f)));
        out.push_back(char(0x80 | (codePoint & 0x3f)));
    }
    return out;
}

// GPT-2's bytes_to_unicode, in its order: the printable bytes map to themselves, the others
// to 256, 257, ...
std::vector<std::string> byteTokens()
{
    std::vector<std::string> tokens;
    std::vector<bool> printable(256, false);
    for (int b = 33; b <= 126; ++b)
        printable[std::size_t(b)] = true;
    for (int b = 161; b <= 172; ++b)
        printable[std::size_t(b)] = true;
    for (int b = 174; b <= 255; ++b)
        printable[std::size_t(b)] = true;
    for (int b = 0; b < 256; ++b) {
        if (printable[std::size_t(b)])
            tokens.push_back(utf8(std::uint32_t(b)));
    }
    std::uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
        if (!printable[std::size_t(b)])
            tokens.push_back(utf8(next++));
    }
    return tokens;
}

constexpr const char* kQwenSpecialTokens[] = {
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
};

bool looksSpecial(const std::string& token)
{
    return token.size() >= 4 && token.rfind("<|", 0) == 0
        && token.compare(token.size() - 2, 2, "|>") == 0;
}

constexpr std::int32_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

// The full_attention_interval llama.cpp writes, when the layer pattern is one (layer i is
// full attention exactly when (i + 1) % interval == 0); nullopt for other patterns.
std::optional<std::int64_t> interval(const HyperParameters& h)
{
    for (std::int64_t k = 1; k <= h.numLayers; ++k) {
        bool matches = true;
        for (std::int64_t i = 0; i < h.numLayers && matches; ++i)
            matches
                = (h.layerKinds[std::size_t(i)] == LayerKind::FullAttention) == ((i + 1) % k == 0);
        if (matches)
            return k;
    }
    return std::nullopt;
}

} // namespace

int GgufTensorSpec::effectiveDims() const
{
    int n = int(ne.size());
    while (n > 1 && ne[std::size_t(n - 1)] == 1)
        --n;
    return n;
}

std::int64_t GgufTensorSpec::elements() const
{
    std::int64_t n = 1;
    for (auto d : ne)
        n *= d;
    return n;
}

std::string_view ggufArchitectureName(Architecture architecture)
{
    return architecture == Architecture::Qwen3Moe ? gguf::kArchQwen3Moe : gguf::kArchQwen35Moe;
}

std::vector<GgufTensorSpec> ggufTensorLayout(const HyperParameters& h)
{
    using R = GgufTensorRole;
    const bool qwen35 = h.architecture == Architecture::Qwen35Moe;
    const R norm = qwen35 ? R::ZeroCentredNorm : R::PlainNorm;
    const std::int64_t H = h.hiddenSize;
    std::vector<GgufTensorSpec> specs;
    specs.push_back({ tensorName(gguf::kTokenEmbd), { H, h.vocabSize }, R::Embedding });
    for (std::int64_t l = 0; l < h.numLayers; ++l) {
        auto add = [&](std::string_view base, std::vector<std::int64_t> ne, R role,
                       std::string_view suffix = "weight") {
            specs.push_back({ blockTensorName(l, base, suffix), std::move(ne), role, l });
        };
        add(gguf::kAttnNorm, { H }, norm);
        if (h.layerKinds[std::size_t(l)] == LayerKind::FullAttention) {
            const std::int64_t q = h.numHeads * h.headDim * (h.attentionOutputGate ? 2 : 1);
            const std::int64_t kv = h.numKvHeads * h.headDim;
            add(gguf::kAttnQ, { H, q }, R::Matrix);
            add(gguf::kAttnK, { H, kv }, R::Matrix);
            add(gguf::kAttnV, { H, kv }, R::Matrix);
            add(gguf::kAttnOutput, { h.numHeads * h.headDim, H }, R::Matrix);
            add(gguf::kAttnQNorm, { h.headDim }, norm);
            add(gguf::kAttnKNorm, { h.headDim }, norm);
        } else {
            const std::int64_t keys = h.linearNumKeyHeads * h.linearKeyHeadDim;
            const std::int64_t values = h.linearNumValueHeads * h.linearValueHeadDim;
            const std::int64_t nv = h.linearNumValueHeads;
            add(gguf::kAttnQkv, { H, 2 * keys + values }, R::Matrix);
            add(gguf::kAttnGate, { H, values }, R::Matrix);
            add(gguf::kSsmBeta, { H, nv }, R::Matrix);
            add(gguf::kSsmAlpha, { H, nv }, R::Matrix);
            add(gguf::kSsmConv1d, { h.linearConvKernel, 2 * keys + values }, R::SsmConv);
            add(gguf::kSsmDt, { nv }, R::SsmDtBias, "bias");
            add(gguf::kSsmA, { nv }, R::SsmA, "");
            add(gguf::kSsmNorm, { h.linearValueHeadDim }, R::PlainNorm);
            add(gguf::kSsmOut, { values, H }, R::Matrix);
        }
        add(qwen35 ? gguf::kPostAttentionNorm : gguf::kFfnNorm, { H }, norm);
        add(gguf::kFfnGateInp, { H, h.numExperts }, R::Router);
        add(gguf::kFfnGateExps, { H, h.expertFfnSize, h.numExperts }, R::Experts);
        add(gguf::kFfnUpExps, { H, h.expertFfnSize, h.numExperts }, R::Experts);
        add(gguf::kFfnDownExps, { h.expertFfnSize, H, h.numExperts }, R::Experts);
        if (qwen35 && h.sharedExpertFfnSize > 0) {
            add(gguf::kFfnGateInpShexp, { H, 1 }, R::Matrix);
            add(gguf::kFfnGateShexp, { H, h.sharedExpertFfnSize }, R::Matrix);
            add(gguf::kFfnUpShexp, { H, h.sharedExpertFfnSize }, R::Matrix);
            add(gguf::kFfnDownShexp, { h.sharedExpertFfnSize, H }, R::Matrix);
        }
    }
    specs.push_back({ tensorName(gguf::kOutputNorm), { H }, norm });
    if (!h.tieWordEmbeddings)
        specs.push_back({ tensorName(gguf::kOutput), { H, h.vocabSize }, R::Output });
    return specs;
}

namespace {

const std::map<std::string_view, std::uint32_t>& llamaFileTypes()
{
    static const std::map<std::string_view, std::uint32_t> kTypes = {
        { "f32", 0 },
        { "f16", 1 },
        { "q4_0", 2 },
        { "q4_1", 3 },
        { "q8_0", 7 },
        { "q5_0", 8 },
        { "q5_1", 9 },
        { "q4_k_s", 14 },
        { "q4_k_m", 15 },
        { "q5_k_s", 16 },
        { "q5_k_m", 17 },
        { "q6_k", 18 },
        { "bf16", 32 },
    };
    return kTypes;
}

} // namespace

std::optional<std::string> llamaFileTypeName(std::uint32_t fileType)
{
    for (const auto& [name, number] : llamaFileTypes())
        if (number == fileType)
            return std::string(name);
    return std::nullopt;
}

std::optional<std::uint32_t> llamaFileType(std::string_view mix)
{
    const auto& kTypes = llamaFileTypes();
    std::string lower(mix);
    for (auto& c : lower)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    const auto it = kTypes.find(lower);
    return it == kTypes.end() ? std::nullopt : std::optional<std::uint32_t>(it->second);
}

void setGgufHyperParameters(GgufWriter& w, const HyperParameters& h, const GgufModelFacts& facts)
{
    const std::string arch(ggufArchitectureName(h.architecture));
    const auto key = [&](std::string_view suffix) { return archKey(arch, suffix); };
    w.setString(std::string(gguf::kGeneralArchitecture), arch);
    w.setString("general.type", "model");
    w.setString(std::string(gguf::kGeneralName), facts.name);
    w.setUint32(key(gguf::kBlockCount), std::uint32_t(h.numLayers));
    w.setUint32(key(gguf::kContextLength), std::uint32_t(h.contextLength));
    w.setUint32(key(gguf::kEmbeddingLength), std::uint32_t(h.hiddenSize));
    w.setUint32(key(gguf::kAttentionHeadCount), std::uint32_t(h.numHeads));
    w.setUint32(key(gguf::kAttentionHeadCountKv), std::uint32_t(h.numKvHeads));
    if (!facts.mropeSections.empty()) {
        std::vector<std::int32_t> sections(facts.mropeSections.begin(), facts.mropeSections.end());
        sections.resize(4, 0);
        w.setInt32Array(key(gguf::kRopeDimensionSections), sections);
    }
    w.setFloat32(key(gguf::kRopeFreqBase), float(h.ropeTheta));
    w.setFloat32(key(gguf::kAttentionLayerNormRmsEpsilon), float(h.rmsNormEps));
    w.setUint32(key(gguf::kExpertCount), std::uint32_t(h.numExperts));
    w.setUint32(key(gguf::kExpertUsedCount), std::uint32_t(h.numExpertsPerToken));
    w.setUint32(key(gguf::kAttentionKeyLength), std::uint32_t(h.headDim));
    w.setUint32(key(gguf::kAttentionValueLength), std::uint32_t(h.headDim));
    w.setUint32(std::string(gguf::kGeneralFileType), facts.fileType);
    w.setUint32(key(gguf::kExpertFeedForwardLength), std::uint32_t(h.expertFfnSize));
    // llama.cpp's qwen3moe always renormalises the top-k weights and its converter writes no
    // key; a model trained without renormalisation says so with the key other MoE
    // architectures use, so our loader computes it as transformers does.
    if (h.architecture == Architecture::Qwen3Moe && !h.normTopkProb)
        w.setBool(key(gguf::kExpertWeightsNorm), false);
    if (h.architecture == Architecture::Qwen35Moe) {
        w.setUint32(
            key(gguf::kExpertSharedFeedForwardLength), std::uint32_t(h.sharedExpertFfnSize));
        w.setUint32(key(gguf::kSsmConvKernel), std::uint32_t(h.linearConvKernel));
        w.setUint32(key(gguf::kSsmStateSize), std::uint32_t(h.linearKeyHeadDim));
        w.setUint32(key(gguf::kSsmGroupCount), std::uint32_t(h.linearNumKeyHeads));
        w.setUint32(key(gguf::kSsmTimeStepRank), std::uint32_t(h.linearNumValueHeads));
        w.setUint32(
            key(gguf::kSsmInnerSize), std::uint32_t(h.linearValueHeadDim * h.linearNumValueHeads));
        // llama.cpp's qwen35moe knows only the interval. Another pattern (a full-attention
        // first layer) is written as the per-layer array our loader reads first; llama.cpp
        // would ignore it and compute the interval's pattern, so such files are ours alone.
        if (const auto every = interval(h)) {
            w.setUint32(key(gguf::kFullAttentionInterval), std::uint32_t(*every));
        } else {
            std::vector<std::int32_t> recurrent;
            for (const LayerKind kind : h.layerKinds)
                recurrent.push_back(kind == LayerKind::GatedDeltaNet ? 1 : 0);
            w.setInt32Array(key(gguf::kAttentionRecurrentLayers), recurrent);
        }
        w.setUint32(key(gguf::kRopeDimensionCount), std::uint32_t(h.ropeDim));
    }
    w.setUint32(std::string(gguf::kGeneralQuantizationVersion), 2);
}

GgufVocabulary syntheticQwenVocabulary(
    std::int64_t vocabSize, std::int64_t firstSpecialId, std::string pre)
{
    GgufVocabulary v;
    v.pre = std::move(pre);
    const std::int64_t specials = std::int64_t(std::size(kQwenSpecialTokens));
    if (firstSpecialId + specials > vocabSize)
        firstSpecialId = std::max<std::int64_t>(0, vocabSize - specials);
    const auto bytes = byteTokens();
    v.tokens.reserve(std::size_t(vocabSize));
    for (std::int64_t i = 0; i < std::min<std::int64_t>(256, firstSpecialId); ++i)
        v.tokens.push_back(bytes[std::size_t(i)]);
    // Pairs of byte tokens, then (pair, byte) triples, each with its merge.
    for (std::size_t a = 0; a < 256 && std::int64_t(v.tokens.size()) < firstSpecialId; ++a) {
        for (std::size_t b = 0; b < 256 && std::int64_t(v.tokens.size()) < firstSpecialId; ++b) {
            v.tokens.push_back(bytes[a] + bytes[b]);
            v.merges.push_back(bytes[a] + " " + bytes[b]);
        }
    }
    for (std::size_t p = 0; std::int64_t(v.tokens.size()) < firstSpecialId; ++p) {
        const std::string pair = bytes[p / 256] + bytes[p % 256];
        for (std::size_t b = 0; b < 256 && std::int64_t(v.tokens.size()) < firstSpecialId; ++b) {
            v.tokens.push_back(pair + bytes[b]);
            v.merges.push_back(pair + " " + bytes[b]);
        }
    }
    v.types.assign(v.tokens.size(), kNormal);
    for (std::int64_t i = 0; i < specials && std::int64_t(v.tokens.size()) < vocabSize; ++i) {
        const std::string token = kQwenSpecialTokens[i];
        v.tokens.push_back(token);
        v.types.push_back(looksSpecial(token) ? kControl : kUserDefined);
    }
    while (std::int64_t(v.tokens.size()) < vocabSize) {
        v.tokens.push_back("[PAD" + std::to_string(v.tokens.size()) + "]");
        v.types.push_back(kUnused);
    }
    v.pad = std::int32_t(firstSpecialId);
    v.bos = std::int32_t(firstSpecialId);
    v.eos = std::int32_t(firstSpecialId + 2); // <|im_end|>
    return v;
}

Result<GgufVocabulary> vocabularyFromTokenizerJson(const std::string& tokenizerJsonPath,
    const std::string& tokenizerConfigPath, std::int64_t vocabSize, std::string pre)
{
    const auto readJson = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream buffer;
        buffer << in.rdbuf();
        return nlohmann::json::parse(buffer.str(), nullptr, false);
    };
    const auto json = readJson(tokenizerJsonPath);
    if (json.is_discarded() || !json.is_object())
        return makeError(tokenizerJsonPath + ": not well-formed JSON");
    const auto model = json.find("model");
    if (model == json.end() || !model->is_object() || !model->contains("vocab")
        || !(*model)["vocab"].is_object())
        return makeError(tokenizerJsonPath + ": has no model.vocab object");

    GgufVocabulary v;
    v.pre = std::move(pre);
    v.tokens.resize(std::size_t(vocabSize));
    v.types.assign(std::size_t(vocabSize), kUnused);
    for (std::int64_t i = 0; i < vocabSize; ++i)
        v.tokens[std::size_t(i)] = "[PAD" + std::to_string(i) + "]";
    std::map<std::string, std::int32_t> ids;
    const auto place = [&](const std::string& token, const nlohmann::json& id,
                           std::int32_t type) -> Result<void> {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0
            || id.get<std::int64_t>() >= vocabSize)
            return makeError(tokenizerJsonPath + ": token \"" + token
                + "\" has an id outside the model's vocabulary of " + std::to_string(vocabSize));
        const auto i = std::size_t(id.get<std::int64_t>());
        v.tokens[i] = token;
        v.types[i] = type;
        ids[token] = std::int32_t(i);
        return {};
    };
    for (const auto& [token, id] : (*model)["vocab"].items()) {
        if (auto r = place(token, id, kNormal); !r)
            return r.error();
    }
    if (const auto added = json.find("added_tokens"); added != json.end() && added->is_array()) {
        for (const auto& entry : *added) {
            if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string())
                return makeError(tokenizerJsonPath + ": an added_tokens entry has no content");
            const std::string token = entry["content"].get<std::string>();
            const bool special = entry.value("special", false) || looksSpecial(token);
            if (auto r = place(
                    token, entry.value("id", nlohmann::json()), special ? kControl : kUserDefined);
                !r)
                return r.error();
        }
    }
    if (const auto merges = model->find("merges"); merges != model->end() && merges->is_array()) {
        for (const auto& merge : *merges) {
            if (merge.is_string())
                v.merges.push_back(merge.get<std::string>());
            else if (merge.is_array() && merge.size() == 2 && merge[0].is_string()
                && merge[1].is_string())
                v.merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
            else
                return makeError(tokenizerJsonPath + ": a merge is neither \"a b\" nor [a, b]");
        }
    }
    if (!tokenizerConfigPath.empty()) {
        const auto config = readJson(tokenizerConfigPath);
        if (config.is_object()) {
            const auto special = [&](const char* field) -> std::optional<std::int32_t> {
                const auto it = config.find(field);
                if (it == config.end())
                    return std::nullopt;
                std::string content;
                if (it->is_string())
                    content = it->get<std::string>();
                else if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
                    content = (*it)["content"].get<std::string>();
                const auto found = ids.find(content);
                return found == ids.end() ? std::nullopt
                                          : std::optional<std::int32_t>(found->second);
            };
            v.eos = special("eos_token");
            v.pad = special("pad_token");
            v.bos = special("bos_token");
            if (auto it = config.find("add_bos_token"); it != config.end() && it->is_boolean())
                v.addBos = it->get<bool>();
        }
    }
    return v;
}

void setGgufVocabulary(GgufWriter& w, const GgufVocabulary& v, const std::string& chatTemplate)
{
    w.setString(std::string(gguf::kTokenizerModel), "gpt2");
    w.setString(std::string(gguf::kTokenizerPre), v.pre);
    w.setStringArray(std::string(gguf::kTokenizerTokens), v.tokens);
    w.setInt32Array(std::string(gguf::kTokenizerTokenType), v.types);
    w.setStringArray(std::string(gguf::kTokenizerMerges), v.merges);
    if (v.eos)
        w.setUint32(std::string(gguf::kTokenizerEosId), std::uint32_t(*v.eos));
    if (v.pad)
        w.setUint32(std::string(gguf::kTokenizerPadId), std::uint32_t(*v.pad));
    if (v.bos)
        w.setUint32(std::string(gguf::kTokenizerBosId), std::uint32_t(*v.bos));
    w.setBool(std::string(gguf::kTokenizerAddBos), v.addBos);
    if (!chatTemplate.empty())
        w.setString(std::string(gguf::kTokenizerChatTemplate), chatTemplate);
}

} // namespace cw::engine
