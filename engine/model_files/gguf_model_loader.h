#pragma once

#include "engine/common/result.h"
#include "engine/model/model_description.h"

#include <string>

namespace cw::engine {

class GgufFile;

// Opens a llama.cpp GGUF model ("qwen3moe" or "qwen35moe"): hyper-parameters from
// <arch>.* metadata, every tensor as a view into the memory map (shapes checked against the
// hyper-parameters), the tokenizer from tokenizer.ggml.* and the chat template. Refuses other
// architectures and inconsistent files with an error naming the file and the problem.
Result<ModelDescription> openGgufModel(const std::string& path);
// The same from an already opened file (its mapping is kept alive by the description).
Result<ModelDescription> describeGgufModel(const GgufFile& file);

} // namespace cw::engine
