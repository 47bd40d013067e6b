#include "app/server/served_model.h"

#include "engine/generation/constraint_vocabulary.h"
#include "engine/model_files/model_loader.h"

#include <filesystem>

namespace cw::server {

Result<std::unique_ptr<ServedModel>> ServedModel::open(
    const std::string& path, const engine::ModelOptions& options, std::string id)
{
    auto description = engine::openModel(path);
    if (!description)
        return description.error();
    auto served = std::make_unique<ServedModel>();
    served->chatTemplate = engine::ChatTemplate::fromJinja(description->chatTemplate);
    auto tokenizer = engine::tokenizerFromSource(description->tokenizer);
    if (!tokenizer)
        return tokenizer.error();
    served->tokenizer = std::make_unique<engine::Tokenizer>(std::move(*tokenizer));
    auto model = engine::Model::create(std::move(*description), options);
    if (!model)
        return model.error();
    served->model = std::move(*model);
    auto vocabulary = engine::constraintVocabulary(*served->tokenizer, *served->model);
    if (!vocabulary)
        return vocabulary.error();
    served->vocabulary = *vocabulary;
    if (id.empty()) {
        std::filesystem::path p(path);
        if (!p.has_filename())
            p = p.parent_path(); // "folder/"
        id = p.filename().string();
    }
    served->id = std::move(id);
    return served;
}

} // namespace cw::server
