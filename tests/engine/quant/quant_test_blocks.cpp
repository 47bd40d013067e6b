#include "quant_test_blocks.h"

#include "kernels/cpu/quant/quant_blocks.h"

#include <cstring>

namespace cw::test {

using namespace cw::kernels::quant;
using cw::kernels::TensorType;

namespace {

Half powerOfTwo(std::mt19937& rng)
{
    // 2^-6 .. 2^1, either sign
    const int e = int(rng() % 8) - 6;
    const float v = (rng() & 1 ? -1.0f : 1.0f) * float(1 << (e + 6)) / 64.0f;
    return fp32ToFp16(v);
}

template <typename Block> void setScales(std::uint8_t* p, std::mt19937& rng)
{
    auto* b = reinterpret_cast<Block*>(p);
    if constexpr (requires { b->d; })
        b->d = powerOfTwo(rng);
    if constexpr (requires { b->m; })
        b->m = powerOfTwo(rng);
    if constexpr (requires { b->dmin; })
        b->dmin = powerOfTwo(rng);
}

} // namespace

std::vector<std::uint8_t> randomBlocks(TensorType type, std::int64_t blocks, std::mt19937& rng)
{
    const auto traits = *kernels::tensorTypeTraits(std::uint32_t(type));
    std::vector<std::uint8_t> data(std::size_t(blocks) * traits.blockBytes);
    for (auto& byte : data)
        byte = std::uint8_t(rng());
    for (std::int64_t i = 0; i < blocks; ++i) {
        std::uint8_t* p = data.data() + i * traits.blockBytes;
        switch (type) {
        case TensorType::F32: {
            const float v = float(int(rng() % 2001) - 1000) / 256.0f;
            std::memcpy(p, &v, 4);
            break;
        }
        case TensorType::F16: {
            const Half h = fp32ToFp16(float(int(rng() % 2001) - 1000) / 256.0f);
            std::memcpy(p, &h, 2);
            break;
        }
        case TensorType::BF16: {
            const std::uint16_t h = fp32ToBf16(float(int(rng() % 2001) - 1000) / 256.0f);
            std::memcpy(p, &h, 2);
            break;
        }
        case TensorType::Q4_0:
            setScales<BlockQ4_0>(p, rng);
            break;
        case TensorType::Q4_1:
            setScales<BlockQ4_1>(p, rng);
            break;
        case TensorType::Q5_0:
            setScales<BlockQ5_0>(p, rng);
            break;
        case TensorType::Q5_1:
            setScales<BlockQ5_1>(p, rng);
            break;
        case TensorType::Q8_0:
            setScales<BlockQ8_0>(p, rng);
            break;
        case TensorType::Q2_K:
            setScales<BlockQ2_K>(p, rng);
            break;
        case TensorType::Q3_K:
            setScales<BlockQ3_K>(p, rng);
            break;
        case TensorType::Q4_K:
            setScales<BlockQ4_K>(p, rng);
            break;
        case TensorType::Q5_K:
            setScales<BlockQ5_K>(p, rng);
            break;
        case TensorType::Q6_K:
            setScales<BlockQ6_K>(p, rng);
            break;
        case TensorType::IQ4_XS:
            setScales<BlockIQ4_XS>(p, rng);
            break;
        }
    }
    return data;
}

} // namespace cw::test
