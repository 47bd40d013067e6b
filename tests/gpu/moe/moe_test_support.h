#pragma once

// Helpers of the MoE GPU tests: device buffers that check every CUDA call, NaN poisoning,
// random expert stacks in their GGUF block layouts, and error figures against the CPU.

#include "kernels/cpu/quant/quantize.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/tensor_type.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace cw::moe_test {

using kernels::TensorType;

#define CW_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << cudaGetErrorString(cudaGetLastError())

// A device allocation, poisoned with 0xFF bytes (NaN as floats) so unwritten output shows.
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes)
        : m_bytes(bytes)
    {
        if (bytes == 0)
            return;
        m_ok = cudaMalloc(&m_data, bytes) == cudaSuccess
            && cudaMemset(m_data, 0xFF, bytes) == cudaSuccess;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { cudaFree(m_data); }

    template <class T> static DeviceBuffer of(const std::vector<T>& host)
    {
        DeviceBuffer b(host.size() * sizeof(T));
        if (b.m_ok && !host.empty())
            b.m_ok = cudaMemcpy(b.m_data, host.data(), b.m_bytes, cudaMemcpyHostToDevice)
                == cudaSuccess;
        return b;
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : m_data(o.m_data)
        , m_bytes(o.m_bytes)
        , m_ok(o.m_ok)
    {
        o.m_data = nullptr;
    }

    template <class T> T* as() const { return static_cast<T*>(m_data); }
    std::size_t bytes() const { return m_bytes; }
    bool ok() const { return m_ok; }
    template <class T> std::vector<T> download() const
    {
        std::vector<T> host(m_bytes / sizeof(T));
        if (cudaMemcpy(host.data(), m_data, m_bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
            host.assign(host.size(), T(-12345));
        return host;
    }

private:
    void* m_data = nullptr;
    std::size_t m_bytes = 0;
    bool m_ok = true;
};

inline std::vector<float> randomFloats(std::size_t n, std::mt19937& rng, float scale = 1.0f)
{
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

struct ErrorFigures {
    double relative = 0.0; // |out - ref| / |ref|
    double maxAbs = 0.0;
    bool finite = true;
};

inline ErrorFigures compare(const std::vector<float>& out, const std::vector<float>& ref)
{
    ErrorFigures f;
    double diff = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(out[i]))
            f.finite = false;
        const double d = double(out[i]) - double(ref[i]);
        diff += d * d;
        norm += double(ref[i]) * double(ref[i]);
        f.maxAbs = std::max(f.maxAbs, std::abs(d));
    }
    f.relative = norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    if (!f.finite)
        f.relative = INFINITY;
    return f;
}

// Host bytes of one matrix of `rows` rows of `cols` values of `type`: quantized random floats,
// or (for the types the CPU cannot write: Q2_K, Q3_K, IQ4_XS) random blocks with sane scales.
inline std::vector<std::uint8_t> randomMatrix(
    TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng)
{
    const std::size_t rowBytes = std::size_t(*kernels::rowBytes(type, std::uint64_t(cols)));
    std::vector<std::uint8_t> bytes(rowBytes * std::size_t(rows));
    if (kernels::quant::canQuantize(type)) {
        for (std::int64_t r = 0; r < rows; ++r) {
            const auto v = randomFloats(std::size_t(cols), rng, 0.5f);
            kernels::quant::quantizeRow(
                type, v.data(), bytes.data() + std::size_t(r) * rowBytes, cols);
        }
        return bytes;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : bytes)
        b = std::uint8_t(byte(rng));
    const auto traits = *kernels::tensorTypeTraits(std::uint32_t(type));
    std::vector<std::size_t> scaleAt; // the f16 super-block scales
    if (type == TensorType::Q2_K)
        scaleAt = { 80, 82 };
    else if (type == TensorType::Q3_K)
        scaleAt = { 108 };
    else
        scaleAt = { 0 };
    // IQ4_XS levels reach 127 times a 6-bit scale: smaller super-block scales keep its values
    // near the others'.
    const float top = type == TensorType::IQ4_XS ? 0.0005f : 0.02f;
    std::uniform_real_distribution<float> scale(top / 10.0f, top);
    for (std::size_t b = 0; b < bytes.size() / traits.blockBytes; ++b)
        for (const std::size_t at : scaleAt) {
            const float s = scale(rng);
            kernels::quant::quantizeRow(
                TensorType::F16, &s, bytes.data() + b * traits.blockBytes + at, 1);
        }
    return bytes;
}

} // namespace cw::moe_test
