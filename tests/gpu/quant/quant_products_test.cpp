// The CUDA quantized products against the CPU: dequantization bit for bit, the matrix-vector
// products (1..8 token rows), the integer tensor-core products (9..64) and the cuBLAS prefill
// path within their error bounds, and the embedding lookup.
#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cuda/quant/quant_internal.h"
#include "kernels/cuda/quant/quant_products.h"
#include "tests/gpu/quant/quant_test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cublas_v2.h>
#include <gtest/gtest.h>
#include <vector>

namespace cw::kernels::cuda {
namespace {

using test::allMatrixTypes;
using test::bytesPerRow;
using test::DeviceBuffer;
using test::randomFloats;
using test::randomMatrix;
using test::typeName;

#define CW_CUDA_OK(expr) ASSERT_EQ(cudaSuccess, (expr)) << #expr

struct Error {
    double relative = 0; // ||out - ref|| / ||ref||
    double maxAbs = 0;
};

// out and ref: tokens rows of `rows` values, out's rows outStride apart.
Error compare(const std::vector<float>& out, std::size_t outStride, const std::vector<float>& ref,
    std::int64_t tokens, std::int64_t rows)
{
    double diff = 0, norm = 0, maxAbs = 0;
    for (std::int64_t t = 0; t < tokens; ++t) {
        for (std::int64_t r = 0; r < rows; ++r) {
            const double o = out[std::size_t(t) * outStride + std::size_t(r)];
            const double e = ref[std::size_t(t * rows + r)];
            const double d = std::isnan(o) ? INFINITY : std::fabs(o - e);
            diff += d * d;
            norm += e * e;
            maxAbs = std::max(maxAbs, d);
        }
    }
    return { std::sqrt(diff / std::max(norm, 1e-30)), maxAbs };
}

class QuantProducts : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(cudaSuccess, cudaStreamCreate(&m_stream));
        ASSERT_EQ(CUBLAS_STATUS_SUCCESS, cublasCreate(&m_cublas));
        ASSERT_EQ(CUBLAS_STATUS_SUCCESS, cublasSetStream(m_cublas, m_stream));
    }
    void TearDown() override
    {
        cublasDestroy(m_cublas);
        cudaStreamDestroy(m_stream);
    }

    // Uploads a random matrix; host copy in `host`.
    DeviceMatrix upload(TensorType type, std::int64_t rows, std::int64_t cols,
        std::size_t rowStride, std::vector<std::uint8_t>& host,
        std::unique_ptr<DeviceBuffer>& buffer)
    {
        host = randomMatrix(type, rows, cols, rowStride, m_rng);
        buffer = std::make_unique<DeviceBuffer>(host.size());
        EXPECT_EQ(cudaSuccess, buffer->error());
        EXPECT_EQ(cudaSuccess,
            cudaMemcpy(buffer->get(), host.data(), host.size(), cudaMemcpyHostToDevice));
        return DeviceMatrix { type, buffer->get(), rowStride, rows, cols };
    }

    std::mt19937 m_rng { 20240611 };
    cudaStream_t m_stream = nullptr;
    cublasHandle_t m_cublas = nullptr;
};

std::vector<float> cpuDequantize(TensorType type, const std::vector<std::uint8_t>& host,
    std::size_t rowStride, std::int64_t rows, std::int64_t cols)
{
    std::vector<float> ref(std::size_t(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r)
        quant::dequantizeRow(
            type, host.data() + std::size_t(r) * rowStride, ref.data() + r * cols, cols);
    return ref;
}

std::size_t countBitMismatches(const std::vector<float>& a, const std::vector<float>& b)
{
    std::size_t bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        bad += std::memcmp(&a[i], &b[i], 4) != 0;
    return bad;
}

TEST_F(QuantProducts, dequantizeMatchesCpuBitForBitForEveryType)
{
    for (TensorType type : allMatrixTypes()) {
        for (std::int64_t cols : { std::int64_t(512), std::int64_t(1024 + 256) }) {
            const std::int64_t rows = 5;
            const std::size_t stride = bytesPerRow(type, cols);
            std::vector<std::uint8_t> host;
            std::unique_ptr<DeviceBuffer> weights;
            const DeviceMatrix w = upload(type, rows, cols, stride, host, weights);
            const std::vector<float> ref = cpuDequantize(type, host, stride, rows, cols);

            DeviceBuffer out(ref.size() * 4), out16(ref.size() * 2);
            CW_CUDA_OK(cudaMemset(out.get(), 0xFF, ref.size() * 4));
            CW_CUDA_OK(cudaMemset(out16.get(), 0xFF, ref.size() * 2));
            CW_CUDA_OK(dequantizeToF32(w, out.get<float>(), m_stream));
            CW_CUDA_OK(dequantizeToBf16(w, out16.get<std::uint16_t>(), m_stream));
            CW_CUDA_OK(cudaStreamSynchronize(m_stream));
            std::vector<float> got(ref.size());
            std::vector<std::uint16_t> got16(ref.size());
            CW_CUDA_OK(cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
            CW_CUDA_OK(
                cudaMemcpy(got16.data(), out16.get(), got16.size() * 2, cudaMemcpyDeviceToHost));
            EXPECT_EQ(0u, countBitMismatches(got, ref))
                << typeName(type) << " dequant8, cols " << cols;
            std::size_t bad16 = 0;
            for (std::size_t i = 0; i < ref.size(); ++i)
                bad16 += got16[i] != quant::fp32ToBf16(ref[i]);
            EXPECT_EQ(0u, bad16) << typeName(type) << " to bf16, cols " << cols;

            if (tensorTypeTraits(std::uint32_t(type))->blockSize >= 32) { // the chunk decoders
                CW_CUDA_OK(cudaMemset(out.get(), 0xFF, ref.size() * 4));
                CW_CUDA_OK(quant_detail::dequantizeChunksToF32(w, out.get<float>(), m_stream));
                CW_CUDA_OK(cudaStreamSynchronize(m_stream));
                CW_CUDA_OK(
                    cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
                EXPECT_EQ(0u, countBitMismatches(got, ref))
                    << typeName(type) << " chunks, cols " << cols;
            }
        }
    }
}

TEST_F(QuantProducts, gatherRowsMatchesCpuDequantization)
{
    for (TensorType type : allMatrixTypes()) {
        const std::int64_t rows = 50, cols = 768;
        const std::size_t stride = bytesPerRow(type, cols);
        std::vector<std::uint8_t> host;
        std::unique_ptr<DeviceBuffer> weights;
        const DeviceMatrix w = upload(type, rows, cols, stride, host, weights);
        const std::vector<float> all = cpuDequantize(type, host, stride, rows, cols);
        const std::vector<std::int32_t> ids { 3, 49, 0, 3, 17, 48, 1 };
        DeviceBuffer dIds(ids.size() * 4), out(ids.size() * std::size_t(cols) * 4);
        CW_CUDA_OK(cudaMemcpy(dIds.get(), ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
        CW_CUDA_OK(cudaMemset(out.get(), 0xFF, ids.size() * std::size_t(cols) * 4));
        CW_CUDA_OK(gatherRows(
            w, dIds.get<std::int32_t>(), std::int64_t(ids.size()), out.get<float>(), m_stream));
        CW_CUDA_OK(cudaStreamSynchronize(m_stream));
        std::vector<float> got(ids.size() * std::size_t(cols)), ref;
        CW_CUDA_OK(cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
        for (std::int32_t id : ids)
            ref.insert(ref.end(), all.begin() + id * cols, all.begin() + (id + 1) * cols);
        EXPECT_EQ(0u, countBitMismatches(got, ref)) << typeName(type);
    }
}

// Runs linear() for `tokens` rows of x (stride xStride, y stride yStride) and compares with
// the CPU's matMul on the same blocks.
Error runLinear(const DeviceMatrix& w, const std::vector<std::uint8_t>& host, std::int64_t tokens,
    GemmPrecision precision, std::mt19937& rng, cublasHandle_t cublas, cudaStream_t stream)
{
    const std::int64_t xStride = w.cols + 4, yStride = w.rows + 3;
    const std::vector<float> xs = randomFloats(std::size_t(tokens * w.cols), rng);
    std::vector<float> xPadded(std::size_t(tokens * xStride), 7.0f);
    for (std::int64_t t = 0; t < tokens; ++t)
        std::copy_n(xs.begin() + t * w.cols, w.cols, xPadded.begin() + t * xStride);
    std::vector<float> ref(std::size_t(tokens * w.rows));
    quant::matMul(
        w.type, host.data(), w.rowStride, w.rows, w.cols, xs.data(), tokens, ref.data(), nullptr);

    DeviceBuffer dx(xPadded.size() * 4), dy(std::size_t(tokens * yStride) * 4);
    const std::size_t scratchBytes = linearScratchBytes(w, tokens, precision);
    DeviceBuffer scratch(scratchBytes);
    EXPECT_EQ(cudaSuccess,
        cudaMemcpy(dx.get(), xPadded.data(), xPadded.size() * 4, cudaMemcpyHostToDevice));
    EXPECT_EQ(cudaSuccess, cudaMemset(dy.get(), 0xFF, std::size_t(tokens * yStride) * 4));
    EXPECT_EQ(cudaSuccess,
        linear(w, dx.get<float>(), xStride, tokens, dy.get<float>(), yStride, precision,
            DeviceScratch { scratch.get<std::byte>(), scratchBytes }, cublas, stream));
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
    std::vector<float> got(std::size_t(tokens * yStride));
    EXPECT_EQ(
        cudaSuccess, cudaMemcpy(got.data(), dy.get(), got.size() * 4, cudaMemcpyDeviceToHost));
    return compare(got, std::size_t(yStride), ref, tokens, w.rows);
}

// Every kernel family (the default choice, the f32-FMA kernels and the tensor-core kernels
// forced on every token count) on shapes that reach each code path.
TEST_F(QuantProducts, matVecMatchesCpuForEveryType)
{
    struct Shape {
        std::int64_t rows, cols;
        std::size_t pad; // extra bytes per row
    };
    const struct {
        quant_detail::MatVecKernel kernel;
        const char* name;
    } kernels[] = { { quant_detail::MatVecKernel::Auto, "auto" },
        { quant_detail::MatVecKernel::Simt, "simt" }, { quant_detail::MatVecKernel::Mma, "mma" } };
    for (TensorType type : allMatrixTypes()) {
        const bool plain = tensorTypeTraits(std::uint32_t(type))->blockSize == 1;
        // 256 columns: one tile, rows not 16-byte aligned for Q3_K and Q6_K; 4608: a whole
        // tile and a part; 2050 rows: four rows per block; 96 columns (32-value types): a
        // partial macro-block of the mma kernel; 1001: the plain types' tail.
        // 1100 x 2048: rows 16-byte aligned for every type (the tensor-core kernel's need) and
        // enough rows for the default choice to take it from 4 token rows on.
        std::vector<Shape> shapes { { 67, 256, 0 }, { 67, 4608, 0 }, { 2050, 256, 0 },
            { 37, 512, 16 }, { 1100, 2048, 0 } };
        if (tensorTypeTraits(std::uint32_t(type))->blockSize <= 32)
            shapes.push_back({ 21, 96, 0 });
        if (plain)
            shapes.push_back({ 19, 1001, 0 });
        std::printf("matvec %-7s", typeName(type));
        for (const auto& k : kernels) {
            quant_detail::setMatVecKernel(k.kernel);
            Error worst;
            for (const Shape& s : shapes) {
                std::vector<std::uint8_t> host;
                std::unique_ptr<DeviceBuffer> weights;
                const DeviceMatrix w = upload(
                    type, s.rows, s.cols, bytesPerRow(type, s.cols) + s.pad, host, weights);
                for (std::int64_t tokens = 1; tokens <= kMatVecMaxTokens; ++tokens) {
                    const Error e = runLinear(
                        w, host, tokens, GemmPrecision::Float32, m_rng, m_cublas, m_stream);
                    EXPECT_LT(e.relative, 1e-5)
                        << typeName(type) << " " << k.name << " rows " << s.rows << " cols "
                        << s.cols << " tokens " << tokens;
                    worst.relative = std::max(worst.relative, e.relative);
                    worst.maxAbs = std::max(worst.maxAbs, e.maxAbs);
                }
            }
            std::printf("  %s rel %.3g abs %.3g", k.name, worst.relative, worst.maxAbs);
        }
        quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Auto);
        std::printf("\n");
    }
}

// The integer products (int8 activations, dp4a) for every block type at 1..8 token rows,
// within 1e-2 relative error (||y - ref|| / ||ref||) of the CPU's f32 products on the same
// blocks: int8 activations round each value to 1/254 of its block's largest, ~0.5 % here.
TEST_F(QuantProducts, intMatVecMatchesCpuWithinInt8RoundingForEveryBlockType)
{
    struct Shape {
        std::int64_t rows, cols;
        std::size_t pad;
    };
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Int8);
    for (TensorType type : allMatrixTypes()) {
        if (tensorTypeTraits(std::uint32_t(type))->blockSize == 1)
            continue; // F32, F16, BF16 keep their float kernels
        // 256 columns: one super-block per row (1024 rows: the tiny models' logits); 4608: 18
        // super-blocks, four warps; 2050 rows: a partial block of four rows; 16 pad bytes:
        // rows apart by more than their blocks; 2048 columns: the model's hidden size.
        std::vector<Shape> shapes { { 67, 256, 0 }, { 67, 4608, 0 }, { 2050, 256, 0 },
            { 1024, 256, 0 }, { 37, 512, 16 }, { 1100, 2048, 0 } };
        if (tensorTypeTraits(std::uint32_t(type))->blockSize <= 32)
            shapes.push_back({ 21, 96, 0 });
        // The int8 activations' rounding (one step of amax / 127 per 32 values) against the
        // f32 reference: 0.7e-2 to 2.9e-2 over the random matrices of two runs on the H200
        // (2026-12-01), the k-quants with the widest spread of sub-block scales highest. A
        // wrong unpacking or scale lands far above.
        const double bound = 4e-2;
        double worst = 0.0;
        for (const Shape& s : shapes) {
            std::vector<std::uint8_t> host;
            std::unique_ptr<DeviceBuffer> weights;
            const DeviceMatrix w
                = upload(type, s.rows, s.cols, bytesPerRow(type, s.cols) + s.pad, host, weights);
            for (std::int64_t tokens = 1; tokens <= kMatVecMaxTokens; ++tokens) {
                // Not a silent fall back to the f32 kernels.
                EXPECT_TRUE(quant_detail::usesIntMatVec(w, tokens, GemmPrecision::BFloat16))
                    << typeName(type) << " cols " << s.cols;
                const Error e = runLinear(
                    w, host, tokens, GemmPrecision::BFloat16, m_rng, m_cublas, m_stream);
                EXPECT_LT(e.relative, bound) << typeName(type) << " rows " << s.rows << " cols "
                                             << s.cols << " tokens " << tokens;
                worst = std::max(worst, e.relative);
            }
        }
        std::printf("int8 matvec %-7s worst rel %.3g (bound %.0e)\n", typeName(type), worst, bound);
    }
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Auto);
}

// y = x W^T on the device for `tokens` rows of x (xStride floats apart) into rows yStride apart,
// as `calls` calls of at most `perCall` rows each.
std::vector<float> deviceLinear(const DeviceMatrix& w, const std::vector<float>& xPadded,
    std::int64_t xStride, std::int64_t tokens, std::int64_t yStride, std::int64_t perCall,
    GemmPrecision precision, cublasHandle_t cublas, cudaStream_t stream)
{
    DeviceBuffer dx(xPadded.size() * 4), dy(std::size_t(tokens * yStride) * 4);
    const std::size_t scratchBytes = linearScratchBytes(w, perCall, precision);
    DeviceBuffer scratch(scratchBytes);
    EXPECT_EQ(cudaSuccess,
        cudaMemcpy(dx.get(), xPadded.data(), xPadded.size() * 4, cudaMemcpyHostToDevice));
    EXPECT_EQ(cudaSuccess, cudaMemset(dy.get(), 0xFF, std::size_t(tokens * yStride) * 4));
    for (std::int64_t t0 = 0; t0 < tokens; t0 += perCall)
        EXPECT_EQ(cudaSuccess,
            linear(w, dx.get<float>() + t0 * xStride, xStride, std::min(perCall, tokens - t0),
                dy.get<float>() + t0 * yStride, yStride, precision,
                DeviceScratch { scratch.get<std::byte>(), scratchBytes }, cublas, stream));
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
    std::vector<float> got(std::size_t(tokens * yStride));
    EXPECT_EQ(
        cudaSuccess, cudaMemcpy(got.data(), dy.get(), got.size() * 4, cudaMemcpyDeviceToHost));
    return got;
}

// The tensor-core integer products (9..64 token rows, mma.sync on int8) for every block type
// they serve: within the int8 rounding of the CPU's f32 products, and equal within float
// rounding to the dp4a matrix-vector products of the same rows, 8 at a time (the same
// activations and integer sums; each piece's scaled sum is added in another order). A wrong
// fragment layout, scale or min lands far above either bound.
TEST_F(QuantProducts, intMatMulEqualsTheIntMatVecRowsForEveryBlockType)
{
    struct Shape {
        std::int64_t rows, cols;
        std::size_t pad;
    };
    // By default only matrices of 65,536 rows and more take them (CW_CUDA_INTMM); every
    // matrix takes them in this test, the setting restored on any exit.
    struct IntMatMulForAll {
        IntMatMulForAll() { quant_detail::setIntMatMulForAll(true); }
        ~IntMatMulForAll() { quant_detail::setIntMatMulForAll(false); }
    } forAll;
    for (TensorType type : allMatrixTypes()) {
        if (tensorTypeTraits(std::uint32_t(type))->blockSize == 1 || type == TensorType::Q2_K)
            continue; // float types keep their kernels; Q2_K's mins take the matrix-vector path
        // 67 rows: a partial 16-row tile; 4608 columns: 18 super-blocks, units spread over the
        // four warps unevenly; 37 x 512 with 16 pad bytes: rows apart by more than their
        // blocks; 96 columns: three units of the 32-value types (an odd last pair).
        std::vector<Shape> shapes { { 67, 256, 0 }, { 67, 4608, 0 }, { 37, 512, 16 },
            { 1100, 2048, 0 } };
        if (tensorTypeTraits(std::uint32_t(type))->blockSize <= 32)
            shapes.push_back({ 21, 96, 0 });
        double worstCpu = 0.0, worstRows = 0.0;
        for (const Shape& s : shapes) {
            std::vector<std::uint8_t> host;
            std::unique_ptr<DeviceBuffer> weights;
            const DeviceMatrix w
                = upload(type, s.rows, s.cols, bytesPerRow(type, s.cols) + s.pad, host, weights);
            for (const std::int64_t tokens : { 9, 16, 17, 32, 33, 64 }) {
                ASSERT_TRUE(quant_detail::usesIntMatVec(w, tokens, GemmPrecision::BFloat16))
                    << typeName(type) << " cols " << s.cols << " tokens " << tokens;
                const std::int64_t xStride = w.cols + 4, yStride = w.rows + 3;
                const std::vector<float> xs = randomFloats(std::size_t(tokens * w.cols), m_rng);
                std::vector<float> xPadded(std::size_t(tokens * xStride), 7.0f);
                for (std::int64_t t = 0; t < tokens; ++t)
                    std::copy_n(xs.begin() + t * w.cols, w.cols, xPadded.begin() + t * xStride);
                std::vector<float> ref(std::size_t(tokens * w.rows));
                quant::matMul(w.type, host.data(), w.rowStride, w.rows, w.cols, xs.data(), tokens,
                    ref.data(), nullptr);
                const std::vector<float> got = deviceLinear(w, xPadded, xStride, tokens, yStride,
                    tokens, GemmPrecision::BFloat16, m_cublas, m_stream);
                const std::vector<float> rows = deviceLinear(w, xPadded, xStride, tokens, yStride,
                    kMatVecMaxTokens, GemmPrecision::BFloat16, m_cublas, m_stream);
                std::vector<float> rowsPacked(std::size_t(tokens * w.rows));
                for (std::int64_t t = 0; t < tokens; ++t)
                    std::copy_n(rows.begin() + t * yStride, w.rows, rowsPacked.begin() + t * w.rows);
                const Error cpu = compare(got, std::size_t(yStride), ref, tokens, w.rows);
                const Error same = compare(got, std::size_t(yStride), rowsPacked, tokens, w.rows);
                EXPECT_LT(cpu.relative, 4e-2) << typeName(type) << " rows " << s.rows << " cols "
                                              << s.cols << " tokens " << tokens;
                EXPECT_LT(same.relative, 1e-5) << typeName(type) << " rows " << s.rows
                                               << " cols " << s.cols << " tokens " << tokens;
                worstCpu = std::max(worstCpu, cpu.relative);
                worstRows = std::max(worstRows, same.relative);
            }
        }
        std::printf("int8 mma %-7s rel vs cpu %.3g, vs matvec rows %.3g\n", typeName(type),
            worstCpu, worstRows);
    }
}

// One token row under the staged layout (the row copied to shared memory before the kernel
// waits) and under the plain warp rows: the same sums in the same order, so the same bits, for
// every block type, on rows 16- and 4-byte aligned (staged) and on rows that are not (the
// plain warp rows take them).
TEST_F(QuantProducts, stagedWarpRowsEqualTheWarpRowsBitForBit)
{
    struct Shape {
        std::int64_t rows, cols;
        std::size_t pad;
    };
    const quant_detail::IntMatVecLayout before = quant_detail::intMatVecLayout();
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Int8);
    for (TensorType type : allMatrixTypes()) {
        if (tensorTypeTraits(std::uint32_t(type))->blockSize == 1)
            continue;
        std::vector<Shape> shapes { { 1100, 2048, 0 }, { 67, 4608, 0 }, { 2050, 256, 0 },
            { 37, 512, 16 } };
        if (tensorTypeTraits(std::uint32_t(type))->blockSize <= 32)
            shapes.push_back({ 21, 96, 0 });
        for (const Shape& s : shapes) {
            const std::size_t bytes = bytesPerRow(type, s.cols);
            // 16-byte aligned rows, 4-byte aligned ones (copied 4 or 8 bytes at a time), and
            // rows 2 bytes apart from that (the plain warp rows take them).
            for (const std::size_t stride :
                { (bytes + 15) / 16 * 16 + s.pad, (bytes + 3) / 4 * 4 + 4, bytes + 2 }) {
                std::vector<std::uint8_t> host;
                std::unique_ptr<DeviceBuffer> weights;
                const DeviceMatrix w = upload(type, s.rows, s.cols, stride, host, weights);
                const quant_detail::IntMatVecTarget target {
                    static_cast<const std::uint8_t*>(w.data), w.rowStride, w.rows, nullptr, 0
                };
                const bool staged = quant_detail::stagedRows(type, s.cols, &target, 1).bytes > 0;
                EXPECT_EQ(stride % 4 == 0, staged)
                    << typeName(type) << " cols " << s.cols << " stride " << stride;
                const std::vector<float> x = randomFloats(std::size_t(s.cols), m_rng);
                DeviceBuffer dx(x.size() * 4), dy(std::size_t(s.rows) * 4);
                CW_CUDA_OK(cudaMemcpy(dx.get(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
                const std::size_t scratchBytes = linearScratchBytes(w, 1, GemmPrecision::BFloat16);
                DeviceBuffer scratch(scratchBytes);
                std::vector<float> out[2];
                const quant_detail::IntMatVecLayout layouts[2]
                    = { quant_detail::IntMatVecLayout::WarpRow,
                          quant_detail::IntMatVecLayout::StagedWarpRow };
                for (int l = 0; l < 2; ++l) {
                    quant_detail::setIntMatVecLayout(layouts[l]);
                    CW_CUDA_OK(cudaMemset(dy.get(), 0xFF, std::size_t(s.rows) * 4));
                    CW_CUDA_OK(linear(w, dx.get<float>(), s.cols, 1, dy.get<float>(), s.rows,
                        GemmPrecision::BFloat16,
                        DeviceScratch { scratch.get<std::byte>(), scratchBytes }, m_cublas,
                        m_stream));
                    CW_CUDA_OK(cudaStreamSynchronize(m_stream));
                    out[l].resize(std::size_t(s.rows));
                    CW_CUDA_OK(cudaMemcpy(
                        out[l].data(), dy.get(), out[l].size() * 4, cudaMemcpyDeviceToHost));
                }
                EXPECT_EQ(0u, countBitMismatches(out[0], out[1]))
                    << typeName(type) << " rows " << s.rows << " cols " << s.cols << " stride "
                    << stride;
                for (float v : out[1])
                    ASSERT_TRUE(std::isfinite(v)) << typeName(type) << " cols " << s.cols;
            }
        }
    }
    quant_detail::setIntMatVecLayout(before);
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Auto);
}

// A one-token fan-out over matrices of two K-quant types runs as one launch; its outputs are
// the single-type staged launches' bits, whichever type comes first.
TEST_F(QuantProducts, twoTypeFanOutEqualsOneLaunchPerTypeBitForBit)
{
    const quant_detail::IntMatVecLayout before = quant_detail::intMatVecLayout();
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Int8);
    quant_detail::setIntMatVecLayout(quant_detail::IntMatVecLayout::StagedWarpRow);
    const std::pair<TensorType, TensorType> pairs[]
        = { { TensorType::Q4_K, TensorType::Q6_K }, { TensorType::Q6_K, TensorType::Q4_K },
              { TensorType::Q5_K, TensorType::Q6_K }, { TensorType::Q4_K, TensorType::Q5_K } };
    for (const auto& [a, b] : pairs) {
        for (const std::int64_t cols : { 2048, 512 }) {
            // a, b, a: three outputs of two types, rows not a multiple of a block's four warps.
            const TensorType types[3] = { a, b, a };
            const std::int64_t rows[3] = { 301, 203, 97 };
            std::vector<std::uint8_t> host[3];
            std::unique_ptr<DeviceBuffer> weights[3];
            DeviceMatrix w[3];
            std::size_t scratchBytes = 0;
            for (int i = 0; i < 3; ++i) {
                const std::size_t stride = bytesPerRow(types[i], cols);
                w[i] = upload(types[i], rows[i], cols, stride, host[i], weights[i]);
                scratchBytes
                    = std::max(scratchBytes, linearScratchBytes(w[i], 1, GemmPrecision::BFloat16));
            }
            const std::vector<float> x = randomFloats(std::size_t(cols), m_rng);
            DeviceBuffer dx(x.size() * 4), scratch(scratchBytes);
            const std::size_t outBytes = std::size_t(rows[0] + rows[1] + rows[2]) * 4;
            DeviceBuffer fan(outBytes), single(outBytes);
            CW_CUDA_OK(cudaMemcpy(dx.get(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
            CW_CUDA_OK(cudaMemset(fan.get(), 0xFF, outBytes));
            CW_CUDA_OK(cudaMemset(single.get(), 0xFF, outBytes));
            LinearOutput outputs[3];
            std::int64_t offset = 0;
            for (int i = 0; i < 3; ++i) {
                outputs[i] = { &w[i], fan.get<float>() + offset, rows[i] };
                CW_CUDA_OK(linear(w[i], dx.get<float>(), cols, 1, single.get<float>() + offset,
                    rows[i], GemmPrecision::BFloat16,
                    DeviceScratch { scratch.get<std::byte>(), scratchBytes }, m_cublas, m_stream));
                offset += rows[i];
            }
            CW_CUDA_OK(
                linearFanOut(outputs, 3, dx.get<float>(), cols, 1, nullptr, GemmPrecision::BFloat16,
                    DeviceScratch { scratch.get<std::byte>(), scratchBytes }, m_cublas, m_stream));
            CW_CUDA_OK(cudaStreamSynchronize(m_stream));
            std::vector<float> got(static_cast<std::size_t>(offset)), want(got.size());
            CW_CUDA_OK(cudaMemcpy(got.data(), fan.get(), got.size() * 4, cudaMemcpyDeviceToHost));
            CW_CUDA_OK(
                cudaMemcpy(want.data(), single.get(), want.size() * 4, cudaMemcpyDeviceToHost));
            EXPECT_EQ(0u, countBitMismatches(got, want))
                << typeName(a) << " + " << typeName(b) << " cols " << cols;
            for (float v : got)
                ASSERT_TRUE(std::isfinite(v)) << typeName(a) << " + " << typeName(b);
        }
    }
    quant_detail::setIntMatVecLayout(before);
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Auto);
}

// Float32 is the reference: whatever the switch says, it never quantizes its activations.
TEST_F(QuantProducts, float32KeepsTheF32MatVecKernels)
{
    std::vector<std::uint8_t> host;
    std::unique_ptr<DeviceBuffer> weights;
    const DeviceMatrix w
        = upload(TensorType::Q4_K, 64, 512, bytesPerRow(TensorType::Q4_K, 512), host, weights);
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Int8);
    EXPECT_FALSE(quant_detail::usesIntMatVec(w, 1, GemmPrecision::Float32));
    EXPECT_TRUE(quant_detail::usesIntMatVec(w, 1, GemmPrecision::TensorFloat32));
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Simt);
    EXPECT_FALSE(quant_detail::usesIntMatVec(w, 1, GemmPrecision::BFloat16));
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Auto);
    EXPECT_EQ(0u, linearScratchBytes(w, 8, GemmPrecision::Float32));
    EXPECT_GT(linearScratchBytes(w, 8, GemmPrecision::BFloat16), 0u);
}

TEST_F(QuantProducts, prefillMatchesCpuForEveryTypeAndPrecision)
{
    const struct {
        GemmPrecision precision;
        const char* name;
        double bound;
    } precisions[]
        = { { GemmPrecision::Float32, "f32", 1e-5 }, { GemmPrecision::TensorFloat32, "tf32", 5e-3 },
              { GemmPrecision::BFloat16, "bf16", 1.5e-2 } };
    for (TensorType type : allMatrixTypes()) {
        const std::int64_t rows = 96, cols = 512;
        std::vector<std::uint8_t> host;
        std::unique_ptr<DeviceBuffer> weights;
        const DeviceMatrix w = upload(type, rows, cols, bytesPerRow(type, cols), host, weights);
        std::printf("prefill %-7s", typeName(type));
        for (const auto& p : precisions) {
            // Above kIntMatMulMaxTokens: the dequantized weights and cuBLAS.
            const Error e = runLinear(w, host, 71, p.precision, m_rng, m_cublas, m_stream);
            EXPECT_LT(e.relative, p.bound) << typeName(type) << " " << p.name;
            std::printf("  %s rel %.3g", p.name, e.relative);
        }
        std::printf("\n");
    }
}

// A matrix bigger than one scratch slab, so the prefill path runs several GEMMs.
TEST_F(QuantProducts, prefillSplitsLargeMatricesIntoSlabs)
{
    const std::int64_t rows = 8320, cols = 4096;
    std::vector<std::uint8_t> host;
    std::unique_ptr<DeviceBuffer> weights;
    const DeviceMatrix w
        = upload(TensorType::Q4_K, rows, cols, bytesPerRow(TensorType::Q4_K, cols), host, weights);
    const Error f32 = runLinear(w, host, 9, GemmPrecision::Float32, m_rng, m_cublas, m_stream);
    const Error bf16 = runLinear(w, host, 65, GemmPrecision::BFloat16, m_rng, m_cublas, m_stream);
    EXPECT_LT(f32.relative, 1e-5);
    EXPECT_LT(bf16.relative, 1.5e-2);
    std::printf(
        "prefill slabs q4_K 8320x4096: f32 rel %.3g, bf16 rel %.3g\n", f32.relative, bf16.relative);
}

} // namespace
} // namespace cw::kernels::cuda
