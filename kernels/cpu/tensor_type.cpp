#include "kernels/tensor_type.h"

#include <array>
#include <cctype>
#include <string>

namespace cw::kernels {
namespace {

struct Entry {
    TensorType type;
    TensorTypeTraits traits;
};

// Block geometry from ggml (QK_K = 256 for the k-quants).
constexpr std::array kTypes{
    Entry{TensorType::F32, {"f32", 1, 4}},
    Entry{TensorType::F16, {"f16", 1, 2}},
    Entry{TensorType::BF16, {"bf16", 1, 2}},
    Entry{TensorType::Q4_0, {"q4_0", 32, 18}},
    Entry{TensorType::Q4_1, {"q4_1", 32, 20}},
    Entry{TensorType::Q5_0, {"q5_0", 32, 22}},
    Entry{TensorType::Q5_1, {"q5_1", 32, 24}},
    Entry{TensorType::Q8_0, {"q8_0", 32, 34}},
    Entry{TensorType::Q2_K, {"q2_K", 256, 84}},
    Entry{TensorType::Q3_K, {"q3_K", 256, 110}},
    Entry{TensorType::Q4_K, {"q4_K", 256, 144}},
    Entry{TensorType::Q5_K, {"q5_K", 256, 176}},
    Entry{TensorType::Q6_K, {"q6_K", 256, 210}},
    Entry{TensorType::IQ4_XS, {"iq4_xs", 256, 136}},
};

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

} // namespace

std::optional<TensorTypeTraits> tensorTypeTraits(std::uint32_t ggmlType)
{
    for (const auto& entry : kTypes) {
        if (static_cast<std::uint32_t>(entry.type) == ggmlType)
            return entry.traits;
    }
    return std::nullopt;
}

std::optional<TensorType> tensorTypeFromName(std::string_view name)
{
    const std::string wanted = lower(name);
    for (const auto& entry : kTypes) {
        if (lower(entry.traits.name) == wanted)
            return entry.type;
    }
    return std::nullopt;
}

std::optional<std::uint64_t> rowBytes(TensorType type, std::uint64_t elements)
{
    const auto traits = tensorTypeTraits(static_cast<std::uint32_t>(type));
    if (!traits || elements % traits->blockSize != 0)
        return std::nullopt;
    return elements / traits->blockSize * traits->blockBytes;
}

} // namespace cw::kernels
