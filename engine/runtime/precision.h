#pragma once

#include "engine/common/result.h"
#include "engine/runtime/model.h"

#include <string_view>

namespace cw::engine {

// The arithmetic a user chooses for a model (`--precision`, Model Settings):
//   f32   the reference: float products everywhere (the GPU's CUDA cores, the CPU's float
//         products of K-quant weights too); matches transformers' float32 within 1e-3 of the
//         largest logit;
//   tf32  the GPU's prefill products on TF32 tensor cores, the rest as f32;
//   bf16  the default and the fastest: bf16 tensor cores for long products, 8-bit activations
//         for K-quant weights (on the CPU too), as llama.cpp does.
inline constexpr std::string_view kPrecisionChoices = "f32, tf32 or bf16";
inline constexpr std::string_view kDefaultPrecision = "bf16";

// Sets `options` for the named precision; an unknown name is an error naming the choices.
Result<void> applyPrecision(ModelOptions& options, std::string_view name);

} // namespace cw::engine
