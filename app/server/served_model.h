#pragma once

#include "engine/chat/chat_template.h"
#include "engine/common/result.h"
#include "engine/runtime/model.h"
#include "engine/sampling/token_vocabulary.h"
#include "engine/tokenizer/tokenizer.h"

#include <memory>
#include <string>

namespace cw::server {

// The one model a server answers with: weights on their device, tokenizer, chat template
// and the vocabulary its response-format grammars use.
struct ServedModel {
    std::string id; // the name /v1/models lists and requests give as "model"
    std::unique_ptr<engine::Model> model;
    std::unique_ptr<engine::Tokenizer> tokenizer;
    engine::ChatTemplate chatTemplate;
    std::shared_ptr<const sampling::TokenVocabulary> vocabulary;

    // Opens a GGUF file or Hugging Face folder; `id` empty: the file or folder name.
    static Result<std::unique_ptr<ServedModel>> open(
        const std::string& path, const engine::ModelOptions& options, std::string id = {});
};

} // namespace cw::server
