#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cw::kernels {

// Tensor element and block types (kernels know types and shapes; the engine reuses them), numbered exactly as ggml's `ggml_type` so GGUF files
// map one to one. Quantized types store blocks of `blockSize` elements in `blockBytes`.
enum class TensorType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    IQ4_XS = 23,
    BF16 = 30,
};

struct TensorTypeTraits {
    std::string_view name; // as llama.cpp prints it: "f32", "q4_K", "iq4_xs"
    std::uint32_t blockSize; // elements per block (1 for plain floats)
    std::uint32_t blockBytes; // bytes per block
};

// Traits of a known type; std::nullopt for numbers this engine does not support.
std::optional<TensorTypeTraits> tensorTypeTraits(std::uint32_t ggmlType);
std::optional<TensorType> tensorTypeFromName(std::string_view name); // "q8_0", "Q4_K", "bf16"

// Bytes of one row of `elements` values; nullopt if elements is not a whole number of blocks.
std::optional<std::uint64_t> rowBytes(TensorType type, std::uint64_t elements);

} // namespace cw::kernels
