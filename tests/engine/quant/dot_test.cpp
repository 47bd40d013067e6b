#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/quantize.h"
#include "quant_test_blocks.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace cw::kernels::quant;
using cw::kernels::TensorType;

namespace {

const TensorType kAllTypes[]
    = { TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
          TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
          TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_XS };

struct Matrix {
    std::vector<std::uint8_t> bytes;
    std::size_t rowStride = 0;
};

// rows x cols of random blocks, each row padded by a few bytes to test the stride.
Matrix randomMatrix(TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng)
{
    const auto traits = *cw::kernels::tensorTypeTraits(std::uint32_t(type));
    const std::int64_t blocksPerRow = cols / traits.blockSize;
    Matrix m;
    m.rowStride = std::size_t(blocksPerRow) * traits.blockBytes + 16;
    m.bytes.resize(m.rowStride * std::size_t(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto row = cw::test::randomBlocks(type, blocksPerRow, rng);
        std::copy(row.begin(), row.end(),
            m.bytes.begin() + std::ptrdiff_t(r * std::int64_t(m.rowStride)));
    }
    return m;
}

void expectMatchesReference(TensorType type, CpuKernelPath path, cw::kernels::ThreadPool* pool)
{
    setCpuKernelPath(path);
    std::mt19937 rng(unsigned(type) * 31 + unsigned(path));
    const std::int64_t rows = 70, cols = 512, tokens = 3;
    const Matrix w = randomMatrix(type, rows, cols, rng);
    std::normal_distribution<float> dist;
    std::vector<float> x(static_cast<std::size_t>(tokens * cols));
    for (auto& v : x)
        v = dist(rng);

    std::vector<float> y(static_cast<std::size_t>(tokens * rows));
    std::vector<float> yVec(static_cast<std::size_t>(rows));
    matMul(type, w.bytes.data(), w.rowStride, rows, cols, x.data(), tokens, y.data(), pool);
    matVec(type, w.bytes.data(), w.rowStride, rows, cols, x.data() + cols, yVec.data(), pool);

    std::vector<float> row(static_cast<std::size_t>(cols));
    for (std::int64_t r = 0; r < rows; ++r) {
        dequantizeRow(type, w.bytes.data() + r * std::int64_t(w.rowStride), row.data(), cols);
        for (std::int64_t t = 0; t < tokens; ++t) {
            double ref = 0, magnitude = 0;
            for (std::int64_t c = 0; c < cols; ++c) {
                ref += double(row[std::size_t(c)]) * x[std::size_t(t * cols + c)];
                magnitude += std::fabs(double(row[std::size_t(c)]) * x[std::size_t(t * cols + c)]);
            }
            const double tolerance = 2e-5 * magnitude + 1e-6;
            ASSERT_NEAR(y[std::size_t(t * rows + r)], ref, tolerance)
                << cw::kernels::tensorTypeTraits(std::uint32_t(type))->name << " row " << r
                << " token " << t << (path == CpuKernelPath::Avx2 ? " avx2" : " portable");
            if (t == 1) {
                ASSERT_EQ(yVec[std::size_t(r)], y[std::size_t(t * rows + r)]);
            }
        }
        ASSERT_NEAR(dotRow(type, w.bytes.data() + r * std::int64_t(w.rowStride), x.data(), cols),
            y[std::size_t(r)], 1e-6 * std::fabs(y[std::size_t(r)]) + 1e-6);
    }
}

} // namespace

TEST(MatVec, portablePathMatchesDequantizeAndDotForEveryType)
{
    cw::kernels::ThreadPool pool(2);
    for (TensorType type : kAllTypes)
        expectMatchesReference(type, CpuKernelPath::Portable, &pool);
    setCpuKernelPath(CpuKernelPath::Avx2);
}

TEST(MatVec, avx2PathMatchesDequantizeAndDotForEveryType)
{
    if (!cpuSupportsAvx2())
        GTEST_SKIP() << "this CPU has no AVX2";
    for (TensorType type : kAllTypes) {
        expectMatchesReference(type, CpuKernelPath::Avx2, nullptr);
        cw::kernels::ThreadPool pool(3);
        expectMatchesReference(type, CpuKernelPath::Avx2, &pool);
    }
    EXPECT_EQ(activeCpuKernelPath(), CpuKernelPath::Avx2);
}

TEST(MatVec, quantizedWeightsApproximateTheFloatProduct)
{
    std::mt19937 rng(3);
    std::normal_distribution<float> dist;
    const std::int64_t rows = 8, cols = 1024;
    std::vector<float> w(static_cast<std::size_t>(rows * cols));
    std::vector<float> x(static_cast<std::size_t>(cols));
    for (auto& v : w)
        v = dist(rng);
    for (auto& v : x)
        v = dist(rng);
    for (TensorType type : { TensorType::Q8_0, TensorType::Q6_K, TensorType::Q4_K }) {
        const std::size_t stride = *cw::kernels::rowBytes(type, std::uint64_t(cols));
        std::vector<std::uint8_t> q(stride * std::size_t(rows));
        for (std::int64_t r = 0; r < rows; ++r)
            ASSERT_TRUE(
                quantizeRow(type, w.data() + r * cols, q.data() + std::size_t(r) * stride, cols));
        std::vector<float> y(static_cast<std::size_t>(rows));
        matVec(type, q.data(), stride, rows, cols, x.data(), y.data(), nullptr);
        for (std::int64_t r = 0; r < rows; ++r) {
            double ref = 0;
            for (std::int64_t c = 0; c < cols; ++c)
                ref += double(w[std::size_t(r * cols + c)]) * x[std::size_t(c)];
            // sqrt(cols) ~ 32 is the typical magnitude; 4-bit error ~ 0.1 of each term.
            EXPECT_NEAR(y[std::size_t(r)], ref, 0.15 * std::sqrt(double(cols)));
        }
    }
}
