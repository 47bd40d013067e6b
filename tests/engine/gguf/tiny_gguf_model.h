#pragma once

// Tiny random-weight GGUF models of both architectures, written with GgufWriter under the
// names and shapes llama.cpp uses, for loader, inspect and fuzzing-seed tests.
#include "engine/common/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cw::test {

struct TinyGgufOptions {
    std::string architecture = "qwen35moe"; // or "qwen3moe"; anything else is written as is
    std::string mix = "f32"; // a llama-quantize mix name: "q8_0", "q4_k_m", ...
    bool withMtp = true; // qwen35moe: one nextn block after the 4 layers
    bool fuseGateUp = false; // ffn_gate_up_exps instead of ffn_gate_exps + ffn_up_exps
    std::vector<std::string> skip; // tensors to leave out
    std::map<std::string, std::vector<std::int64_t>> reshape; // tensors written with another shape
    std::vector<std::string> extra; // extra 1-D F32 tensors of 4 values
};

// Geometry: hidden 64, 4 heads of 16 (2 KV heads), 4 experts (2 used) of 32, shared expert 32,
// vocab 128, 4 layers (qwen35moe: DeltaNet, DeltaNet, DeltaNet, attention; 2 key heads and 4
// value heads of 16, conv kernel 4), context 4096.
Result<void> writeTinyGguf(const std::string& path, const TinyGgufOptions& options = {});
Result<std::vector<std::byte>> tinyGgufBytes(const TinyGgufOptions& options = {});

} // namespace cw::test
