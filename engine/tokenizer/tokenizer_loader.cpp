// Builds a Tokenizer from a Hugging Face tokenizer.json (+ tokenizer_config.json) or from
// the tokenizer.ggml.* metadata of a GGUF file.
#include "engine/model/model_description.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/tokenizer.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cw::engine {

namespace {

using nlohmann::json;

// Ids beyond this are refused: no allocation is sized by an unchecked id.
constexpr std::int64_t kMaxVocabulary = 16 * 1024 * 1024;

const std::string kGpt2Pattern
    = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// A member of an object without copying it (json::value() returns a copy); a null json
// when absent.
const json& member(const json& object, const char* key)
{
    static const json kNull;
    if (!object.is_object())
        return kNull;
    const auto it = object.find(key);
    return it == object.end() ? kNull : *it;
}

Result<std::string> readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(path + ": cannot open the file");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad())
        return makeError(path + ": read error");
    return buffer.str();
}

Result<NormalizationForm> parseNormalizer(const json& n, const std::string& source)
{
    if (n.is_null())
        return NormalizationForm::None;
    if (!n.is_object() || !n.contains("type") || !n["type"].is_string())
        return makeError(source + ": \"normalizer\" has no \"type\"");
    const std::string type = n["type"].get<std::string>();
    if (type == "NFC")
        return NormalizationForm::Nfc;
    if (type == "NFD")
        return NormalizationForm::Nfd;
    if (type == "NFKC")
        return NormalizationForm::Nfkc;
    if (type == "NFKD")
        return NormalizationForm::Nfkd;
    if (type == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
        NormalizationForm form = NormalizationForm::None;
        for (const json& item : n["normalizers"]) {
            auto inner = parseNormalizer(item, source);
            if (!inner)
                return inner;
            if (*inner != NormalizationForm::None) {
                if (form != NormalizationForm::None)
                    return makeError(source + ": more than one Unicode normalizer");
                form = *inner;
            }
        }
        return form;
    }
    return makeError(source + ": normalizer \"" + type + "\" is not supported");
}

std::string escapeLiteral(const std::string& s)
{
    std::string out;
    for (const char c : s) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos)
            out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

// The regex of the pre-tokenizer: one Split (Isolated), or ByteLevel with use_regex.
Result<std::string> parsePreTokenizer(const json& p, const std::string& source)
{
    if (p.is_null())
        return makeError(source + ": no \"pre_tokenizer\" (byte-level BPE needs one)");
    std::vector<const json*> items;
    if (p.value("type", "") == "Sequence" && p.contains("pretokenizers")
        && p["pretokenizers"].is_array()) {
        for (const json& item : p["pretokenizers"])
            items.push_back(&item);
    } else {
        items.push_back(&p);
    }
    std::optional<std::string> pattern;
    bool byteLevel = false;
    for (const json* item : items) {
        if (!item->is_object())
            return makeError(source + ": a pre_tokenizer entry is not an object");
        const std::string type = item->value("type", "");
        if (type == "Split") {
            if (pattern)
                return makeError(source + ": more than one Split pre-tokenizer");
            if (item->value("behavior", "") != "Isolated" || item->value("invert", false))
                return makeError(source + ": only Split with behavior Isolated is supported");
            const json& pat = item->value("pattern", json());
            if (pat.is_object() && pat.contains("Regex") && pat["Regex"].is_string())
                pattern = pat["Regex"].get<std::string>();
            else if (pat.is_object() && pat.contains("String") && pat["String"].is_string())
                pattern = escapeLiteral(pat["String"].get<std::string>());
            else
                return makeError(source + ": Split pre-tokenizer has no pattern");
        } else if (type == "ByteLevel") {
            byteLevel = true;
            if (item->value("add_prefix_space", false))
                return makeError(source + ": ByteLevel add_prefix_space is not supported");
            if (item->value("use_regex", true)) {
                if (pattern)
                    return makeError(source + ": Split followed by ByteLevel use_regex");
                pattern = kGpt2Pattern;
            }
        } else {
            return makeError(source + ": pre-tokenizer \"" + type + "\" is not supported");
        }
    }
    if (!byteLevel)
        return makeError(source + ": not a byte-level tokenizer (no ByteLevel pre-tokenizer)");
    if (!pattern)
        return makeError(source + ": pre-tokenizer has no regex");
    return *pattern;
}

// eos_token and friends: a string, or an object with "content".
std::optional<std::string> configToken(const json& config, const char* key)
{
    if (!config.is_object() || !config.contains(key))
        return std::nullopt;
    const json& v = config[key];
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string())
        return v["content"].get<std::string>();
    return std::nullopt;
}

std::optional<std::int32_t> lookup(
    const TokenizerDefinition& def, const std::optional<std::string>& content)
{
    if (!content)
        return std::nullopt;
    for (const AddedToken& a : def.addedTokens) {
        if (a.content == *content)
            return a.id;
    }
    for (std::size_t i = 0; i < def.pieces.size(); ++i) {
        if (def.pieces[i] && *def.pieces[i] == *content)
            return std::int32_t(i);
    }
    return std::nullopt;
}

Result<TokenizerDefinition> definitionFromJson(
    const json& root, const json& config, const std::string& source)
{
    if (!root.is_object())
        return makeError(source + ": the top level is not a JSON object");
    TokenizerDefinition def;
    def.sourceName = source;
    const json& model = member(root, "model");
    if (!model.is_object())
        return makeError(source + ": no \"model\" object");
    if (model.value("type", "BPE") != "BPE")
        return makeError(source + ": model type \"" + model.value("type", "")
            + "\" is not supported (only BPE)");
    if (!model.contains("vocab") || !model["vocab"].is_object())
        return makeError(source + ": \"model.vocab\" is missing or not an object");

    auto normalization = parseNormalizer(member(root, "normalizer"), source);
    if (!normalization)
        return normalization.error();
    def.normalization = *normalization;
    auto pattern = parsePreTokenizer(member(root, "pre_tokenizer"), source);
    if (!pattern)
        return pattern.error();
    def.preTokenizerPattern = *pattern;

    const ByteLevelAlphabet& alphabet = byteLevelAlphabet();
    def.pieces.reserve(model["vocab"].size());
    for (const auto& [spelling, idValue] : model["vocab"].items()) {
        if (!idValue.is_number_integer())
            return makeError(source + ": vocab entry \"" + spelling + "\" has no integer id");
        const std::int64_t id = idValue.get<std::int64_t>();
        if (id < 0 || id >= kMaxVocabulary)
            return makeError(source + ": vocab id " + std::to_string(id) + " is out of range");
        if (std::size_t(id) >= def.pieces.size())
            def.pieces.resize(std::size_t(id) + 1);
        auto bytes = alphabet.decode(spelling);
        if (!bytes)
            return makeError(source + ": vocab entry " + std::to_string(id)
                + " is not in the byte-level alphabet");
        def.pieces[std::size_t(id)] = std::move(*bytes);
    }

    static const json kEmpty = json::array();
    const json& merges = model.contains("merges") ? model["merges"] : kEmpty;
    if (!merges.is_array())
        return makeError(source + ": \"model.merges\" is not an array");
    def.merges.reserve(merges.size());
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
        const json& m = merges[rank];
        std::string left, right;
        if (m.is_string()) {
            const std::string s = m.get<std::string>();
            const auto space = s.find(' ');
            if (space == std::string::npos)
                return makeError(
                    source + ": merge " + std::to_string(rank) + " is not \"left right\"");
            left = s.substr(0, space);
            right = s.substr(space + 1);
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            left = m[0].get<std::string>();
            right = m[1].get<std::string>();
        } else {
            return makeError(source + ": merge " + std::to_string(rank) + " is malformed");
        }
        auto l = alphabet.decode(left);
        auto r = alphabet.decode(right);
        if (!l || !r)
            return makeError(
                source + ": merge " + std::to_string(rank) + " is not in the byte-level alphabet");
        def.merges.emplace_back(std::move(*l), std::move(*r));
    }

    const json& added = root.contains("added_tokens") ? root["added_tokens"] : kEmpty;
    if (!added.is_array())
        return makeError(source + ": \"added_tokens\" is not an array");
    for (const json& a : added) {
        if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer()
            || !a.contains("content") || !a["content"].is_string())
            return makeError(source + ": an added token lacks \"id\" or \"content\"");
        const std::int64_t id = a["id"].get<std::int64_t>();
        if (id < 0 || id >= kMaxVocabulary)
            return makeError(
                source + ": added token id " + std::to_string(id) + " is out of range");
        def.addedTokens.push_back(
            { a["content"].get<std::string>(), std::int32_t(id), a.value("special", false) });
    }

    def.eos = lookup(def, configToken(config, "eos_token"));
    def.pad = lookup(def, configToken(config, "pad_token"));
    def.bos = lookup(def, configToken(config, "bos_token"));
    return def;
}

} // namespace

Result<Tokenizer> parseTokenizerJson(
    std::string_view text, std::string_view configText, const std::string& sourceName)
{
    json root;
    try {
        root = json::parse(text);
    } catch (const json::exception& e) {
        return makeError(sourceName + ": malformed JSON: " + e.what());
    }
    json config;
    if (!configText.empty()) {
        try {
            config = json::parse(configText);
        } catch (const json::exception& e) {
            return makeError(sourceName + ": tokenizer_config.json is malformed JSON: " + e.what());
        }
    }
    try {
        auto def = definitionFromJson(root, config, sourceName);
        if (!def)
            return def.error();
        return Tokenizer::build(std::move(def.value()));
    } catch (const json::exception& e) {
        return makeError(sourceName + ": unexpected structure: " + e.what());
    }
}

Result<Tokenizer> loadTokenizerJson(const std::string& path, const std::string& configPath)
{
    auto text = readFile(path);
    if (!text)
        return text.error();
    std::string config;
    std::string configFile = configPath;
    if (configFile.empty()) {
        const auto slash = path.find_last_of('/');
        configFile = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1))
            + "tokenizer_config.json";
        if (!std::ifstream(configFile).good())
            configFile.clear();
    }
    if (!configFile.empty()) {
        auto configText = readFile(configFile);
        if (!configText)
            return configText.error();
        config = std::move(configText.value());
    }
    return parseTokenizerJson(*text, config, path);
}

Result<Tokenizer> tokenizerFromSource(const TokenizerSource& source)
{
    if (!source.tokenizerJsonPath.empty())
        return loadTokenizerJson(source.tokenizerJsonPath, source.tokenizerConfigPath);
    const std::string name = "GGUF tokenizer.ggml";
    if (source.ggmlTokens.empty())
        return makeError(name + ": no tokens (tokenizer.ggml.tokens missing or empty)");
    if (std::int64_t(source.ggmlTokens.size()) > kMaxVocabulary)
        return makeError(name + ": too many tokens");
    if (!source.ggmlTokenTypes.empty() && source.ggmlTokenTypes.size() != source.ggmlTokens.size())
        return makeError(name + ": token_type has " + std::to_string(source.ggmlTokenTypes.size())
            + " entries for " + std::to_string(source.ggmlTokens.size()) + " tokens");

    TokenizerDefinition def;
    def.sourceName = name;
    def.skipUnknownMerges = true;
    if (source.ggmlPre == "qwen2" || source.ggmlPre == "qwen35" || source.ggmlPre.empty()) {
        // Hugging Face's Qwen tokenizer.json normalizes to NFC; GGUF does not record it.
        def.preTokenizerPattern = PreTokenizer::kQwen2Pattern;
        def.normalization = NormalizationForm::Nfc;
    } else if (source.ggmlPre == "gpt2" || source.ggmlPre == "default") {
        def.preTokenizerPattern = kGpt2Pattern;
    } else {
        return makeError(name + ".pre \"" + source.ggmlPre + "\" is not supported");
    }

    const ByteLevelAlphabet& alphabet = byteLevelAlphabet();
    def.pieces.resize(source.ggmlTokens.size());
    for (std::size_t id = 0; id < source.ggmlTokens.size(); ++id) {
        const int type = source.ggmlTokenTypes.empty() ? 1 : source.ggmlTokenTypes[id];
        const std::string& text = source.ggmlTokens[id];
        if (type == 3 || type == 4) { // control, user defined: matched before BPE, raw text
            def.addedTokens.push_back({ text, std::int32_t(id), type == 3 });
        } else if (type == 5) { // unused (padding of the vocabulary)
            continue;
        } else {
            auto bytes = alphabet.decode(text);
            if (!bytes)
                return makeError(
                    name + ".tokens[" + std::to_string(id) + "] is not in the byte-level alphabet");
            def.pieces[id] = std::move(*bytes);
        }
    }
    def.merges.reserve(source.ggmlMerges.size());
    for (std::size_t rank = 0; rank < source.ggmlMerges.size(); ++rank) {
        const std::string& m = source.ggmlMerges[rank];
        const auto space = m.find(' ');
        if (space == std::string::npos)
            return makeError(name + ".merges[" + std::to_string(rank) + "] is not \"left right\"");
        auto l = alphabet.decode(std::string_view(m).substr(0, space));
        auto r = alphabet.decode(std::string_view(m).substr(space + 1));
        if (!l || !r)
            return makeError(
                name + ".merges[" + std::to_string(rank) + "] is not in the byte-level alphabet");
        def.merges.emplace_back(std::move(*l), std::move(*r));
    }
    def.eos = source.eosId;
    def.pad = source.padId;
    def.bos = source.bosId;
    return Tokenizer::build(std::move(def));
}

} // namespace cw::engine
