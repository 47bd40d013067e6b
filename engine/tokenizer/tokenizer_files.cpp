// openTokenizer: the tokenizer of a model path, whatever form the model takes.
#include "engine/model_files/model_loader.h"
#include "engine/tokenizer/tokenizer.h"

#include <filesystem>

namespace cw::engine {

namespace fs = std::filesystem;

Result<Tokenizer> openTokenizer(const std::string& path)
{
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const fs::path json = fs::path(path) / "tokenizer.json";
        if (fs::is_regular_file(json, ec))
            return loadTokenizerJson(json.string());
        // A folder without tokenizer.json: whatever openModel finds (a GGUF-only folder
        // is not a model folder, so say plainly what is missing).
        return makeError(path + ": no tokenizer.json in this folder");
    }
    if (!fs::exists(path, ec))
        return makeError(path + ": no such file or folder");
    if (fs::path(path).extension() == ".json")
        return loadTokenizerJson(path);
    auto model = openModel(path);
    if (!model)
        return model.error();
    if (model->tokenizer.tokenizerJsonPath.empty() && model->tokenizer.ggmlTokens.empty())
        return makeError(path + ": the model carries no tokenizer");
    auto tokenizer = tokenizerFromSource(model->tokenizer);
    if (!tokenizer)
        return makeError(path + ": " + tokenizer.error().message);
    return tokenizer;
}

} // namespace cw::engine
