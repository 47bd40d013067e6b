#pragma once

#include "engine/common/result.h"
#include "engine/model/model_description.h"

#include <string>

namespace cw::engine {

// Opens whatever model the user points at: a GGUF file (by its magic), a Hugging Face folder
// (config.json + safetensors), or a bare .safetensors file with config.json beside it.
Result<ModelDescription> openModel(const std::string& path);

} // namespace cw::engine
