// Integer products of k-quant weights with Q8_K activations: both paths against the exact
// product of the dequantized weights and the dequantized activations.
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/dot_q8k.h"
#include "kernels/cpu/quant/dot_q8k_avx512.h"
#include "kernels/cpu/quant/q8_k.h"
#include "quant_test_blocks.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace cw::kernels::quant;
using cw::kernels::TensorType;

namespace {

const TensorType kTypes[] = { TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K };

std::vector<float> randomVector(std::int64_t n, std::mt19937& rng, float scale = 1.0f)
{
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& v : x)
        v = dist(rng);
    return x;
}

// Exact product (in double) of row `r` with the activations the blocks stand for.
double exactDot(TensorType type, const std::uint8_t* row, const std::vector<BlockQ8K>& xq,
    std::int64_t cols, double& magnitude)
{
    std::vector<float> w(static_cast<std::size_t>(cols));
    dequantizeRow(type, row, w.data(), cols);
    double sum = 0.0;
    magnitude = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) {
        const auto& b = xq[std::size_t(c / kQK_K)];
        const double term = double(w[std::size_t(c)]) * double(b.d) * b.qs[c % kQK_K];
        sum += term;
        magnitude += std::fabs(term);
    }
    return sum;
}

void expectExact(TensorType type, CpuKernelPath path)
{
    setCpuKernelPath(path);
    std::mt19937 rng(unsigned(type) * 7 + unsigned(path));
    const std::int64_t rows = 37, cols = 1024, blocks = cols / kQK_K;
    const std::size_t stride = std::size_t(*cw::kernels::rowBytes(type, std::uint64_t(cols)));
    std::vector<std::uint8_t> w;
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto row = cw::test::randomBlocks(type, blocks, rng);
        ASSERT_EQ(row.size(), stride);
        w.insert(w.end(), row.begin(), row.end());
    }
    const std::int64_t tokens = 11; // groups of 4, 4, 3 in matMulQ8K (8 and 3 with VNNI)
    std::vector<BlockQ8K> xq(static_cast<std::size_t>(tokens * blocks));
    const auto x = randomVector(tokens * cols, rng, 3.0f);
    for (std::int64_t t = 0; t < tokens; ++t)
        quantizeRowQ8K(x.data() + t * cols, xq.data() + t * blocks, cols);

    std::vector<float> y(static_cast<std::size_t>(tokens * rows));
    cw::kernels::ThreadPool pool(3);
    matMulQ8K(type, w.data(), stride, rows, cols, xq.data(), tokens, y.data(), &pool);
    for (std::int64_t t = 0; t < tokens; ++t) {
        const std::vector<BlockQ8K> xt(xq.begin() + t * blocks, xq.begin() + (t + 1) * blocks);
        std::vector<float> yRows(static_cast<std::size_t>(rows - 5));
        matVecRowsQ8K(type, w.data(), stride, cols, xt.data(), 5, rows, yRows.data());
        for (std::int64_t r = 0; r < rows; ++r) {
            double magnitude = 0.0;
            const double ref
                = exactDot(type, w.data() + std::size_t(r) * stride, xt, cols, magnitude);
            const float got = y[std::size_t(t * rows + r)];
            EXPECT_NEAR(got, ref, 1e-6 * magnitude + 1e-6)
                << cw::kernels::tensorTypeTraits(std::uint32_t(type))->name << " row " << r
                << (path == CpuKernelPath::Avx512        ? " avx512"
                           : path == CpuKernelPath::Avx2 ? " avx2"
                                                         : " portable");
            // Batches unpack each block once for several tokens and must give exactly what one
            // token at a time gives (prefill and decode agree bit for bit).
            EXPECT_EQ(got, dotRowQ8K(type, w.data() + std::size_t(r) * stride, xt.data(), cols));
            if (r >= 5) {
                EXPECT_EQ(got, yRows[std::size_t(r - 5)]);
            }
        }
    }
}

} // namespace

TEST(Q8K, quantizesWithinHalfAStepAndSumsEachRunOf16)
{
    std::mt19937 rng(5);
    const std::int64_t n = 512;
    auto x = randomVector(n, rng, 10.0f);
    x[3] = 0.0f;
    std::vector<BlockQ8K> q(2);
    quantizeRowQ8K(x.data(), q.data(), n);
    for (std::int64_t i = 0; i < n; ++i) {
        const auto& b = q[std::size_t(i / kQK_K)];
        EXPECT_LE(std::fabs(b.d * b.qs[i % kQK_K] - x[std::size_t(i)]), 0.5001f * b.d) << i;
    }
    for (const auto& b : q)
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int i = 0; i < 16; ++i)
                sum += b.qs[16 * g + i];
            EXPECT_EQ(b.bsums[g], sum);
        }
    std::vector<float> zeros(kQK_K, 0.0f);
    quantizeRowQ8K(zeros.data(), q.data(), kQK_K);
    EXPECT_EQ(q[0].d, 0.0f);
    EXPECT_EQ(q[0].qs[7], 0);
}

TEST(Q8K, portableProductsAreExact)
{
    for (TensorType type : kTypes)
        expectExact(type, CpuKernelPath::Portable);
    setCpuKernelPath(detectedCpuKernelPath());
}

TEST(Q8K, avx2ProductsAreExact)
{
    if (!cpuSupportsAvx2())
        GTEST_SKIP() << "this CPU has no AVX2";
    for (TensorType type : kTypes)
        expectExact(type, CpuKernelPath::Avx2);
    setCpuKernelPath(detectedCpuKernelPath());
}

TEST(Q8K, avx512ProductsAreExact)
{
    if (!cpuSupportsAvx512())
        GTEST_SKIP() << "this CPU has no AVX-512 BW";
    for (TensorType type : kTypes)
        expectExact(type, CpuKernelPath::Avx512);
    setCpuKernelPath(detectedCpuKernelPath());
}

// The VNNI kernels fuse the word products into their sums; the integers and the float steps
// are the same, so the values are equal bit for bit (the dispatch takes VNNI where it can, so
// this is where the plain AVX-512 kernels are checked on such a CPU).
TEST(Q8K, avx512WithAndWithoutVnniAgreeBitForBit)
{
    if (!cpuSupportsAvx512() || !cw::kernels::cpuFeatures().avx512vnni)
        GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
    std::mt19937 rng(5);
    const std::int64_t cols = 2048, blocks = cols / kQK_K;
    for (TensorType type : { TensorType::Q4_K, TensorType::Q6_K }) {
        const auto row = cw::test::randomBlocks(type, blocks, rng);
        std::vector<BlockQ8K> xq(static_cast<std::size_t>(8 * blocks));
        const auto x = randomVector(8 * cols, rng, 3.0f);
        for (std::int64_t t = 0; t < 8; ++t)
            quantizeRowQ8K(x.data() + t * cols, xq.data() + t * blocks, cols);
        for (int count = 1; count <= 8; ++count) {
            float plain[8], vnni[8];
            dotRowQ8KTokensAvx512(type, row.data(), xq.data(), blocks, count, cols, plain);
            dotRowQ8KTokensAvx512Vnni(type, row.data(), xq.data(), blocks, count, cols, vnni);
            for (int t = 0; t < count; ++t)
                EXPECT_EQ(plain[t], vnni[t]) << "count " << count << " token " << t;
        }
        EXPECT_EQ(dotRowQ8KAvx512(type, row.data(), xq.data(), cols),
            dotRowQ8KAvx512Vnni(type, row.data(), xq.data(), cols));
    }
}

TEST(Q8K, productsStayCloseToTheFloatActivationProducts)
{
    std::mt19937 rng(11);
    const std::int64_t cols = 2048;
    for (TensorType type : kTypes) {
        const std::size_t stride = std::size_t(*cw::kernels::rowBytes(type, std::uint64_t(cols)));
        const auto row = cw::test::randomBlocks(type, cols / kQK_K, rng);
        const auto x = randomVector(cols, rng);
        std::vector<BlockQ8K> xq(cols / kQK_K);
        quantizeRowQ8K(x.data(), xq.data(), cols);
        std::vector<float> w(static_cast<std::size_t>(cols));
        dequantizeRow(type, row.data(), w.data(), cols);
        double magnitude = 0.0;
        for (std::int64_t c = 0; c < cols; ++c)
            magnitude += std::fabs(double(w[std::size_t(c)]) * x[std::size_t(c)]);
        const float exact = dotRow(type, row.data(), x.data(), cols);
        ASSERT_EQ(stride, row.size());
        // Rounding x to 8 bits moves each term by at most 1/254 of max|x| times |w|.
        EXPECT_NEAR(dotRowQ8K(type, row.data(), xq.data(), cols), exact, 0.01 * magnitude);
    }
}
