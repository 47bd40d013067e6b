#pragma once

// Shared by the quantized-product tests and the micro-benchmark: random matrices of every
// type (quantized from random floats where the CPU has a quantizer, random bytes with sane
// fp16 scales where it has not) and a small device buffer.

#include "kernels/cpu/quant/quant_blocks.h"
#include "kernels/cpu/quant/quantize.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cuda_runtime_api.h>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace cw::kernels::cuda::test {

inline const std::vector<TensorType>& allMatrixTypes()
{
    static const std::vector<TensorType> types { TensorType::F32, TensorType::F16, TensorType::BF16,
        TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
        TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
        TensorType::IQ4_XS };
    return types;
}

inline const char* typeName(TensorType type)
{
    static thread_local std::string name;
    name = std::string(tensorTypeTraits(std::uint32_t(type))->name);
    return name.c_str();
}

inline std::size_t bytesPerRow(TensorType type, std::int64_t cols)
{
    return std::size_t(*rowBytes(type, std::uint64_t(cols)));
}

inline std::vector<float> randomFloats(std::size_t n, std::mt19937& rng, float scale = 1.0f)
{
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) {
        f = normal(rng);
        if (f == 0.0f)
            f = 0.25f * scale;
    }
    return v;
}

// A rows x cols matrix of `type`, rows rowStride bytes apart (>= bytesPerRow).
inline std::vector<std::uint8_t> randomMatrix(
    TensorType type, std::int64_t rows, std::int64_t cols, std::size_t rowStride, std::mt19937& rng)
{
    const std::size_t rowSize = bytesPerRow(type, cols);
    std::vector<std::uint8_t> bytes(rowStride * std::size_t(rows), 0xA5);
    if (quant::canQuantize(type)) {
        for (std::int64_t r = 0; r < rows; ++r) {
            // Rows of different magnitudes, so scales vary as in a real matrix.
            const float scale = 0.02f * float(1 + r % 7);
            const std::vector<float> values = randomFloats(std::size_t(cols), rng, scale);
            quant::quantizeRow(
                type, values.data(), bytes.data() + std::size_t(r) * rowStride, cols);
        }
        return bytes;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> unit(0.001f, 0.01f);
    const auto traits = *tensorTypeTraits(std::uint32_t(type));
    for (std::int64_t r = 0; r < rows; ++r) {
        std::uint8_t* row = bytes.data() + std::size_t(r) * rowStride;
        for (std::size_t i = 0; i < rowSize; ++i)
            row[i] = std::uint8_t(byte(rng));
        for (std::size_t b = 0; b < rowSize / traits.blockBytes; ++b) {
            std::uint8_t* block = row + b * traits.blockBytes;
            auto setHalf = [&](std::size_t offset) {
                const quant::Half h = quant::fp32ToFp16(unit(rng));
                std::memcpy(block + offset, &h, 2);
            };
            if (type == TensorType::Q2_K) {
                setHalf(80);
                setHalf(82);
            } else if (type == TensorType::Q3_K) {
                setHalf(108);
            } else if (type == TensorType::IQ4_XS) {
                setHalf(0);
            }
        }
    }
    return bytes;
}

// Device memory freed on scope exit.
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes) { m_error = cudaMalloc(&m_data, bytes ? bytes : 1); }
    ~DeviceBuffer() { cudaFree(m_data); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    template <class T = void> T* get() const { return static_cast<T*>(m_data); }
    cudaError_t error() const { return m_error; }

private:
    void* m_data = nullptr;
    cudaError_t m_error = cudaSuccess;
};

} // namespace cw::kernels::cuda::test
