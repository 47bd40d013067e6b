// The row kernels on the device against the CPU's ops (rmsNorm) and plain host loops.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/ops/row_ops.h"
#include "kernels/cuda/quant/mat_vec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

#define CW_CUDA_OK(expr)                                                                           \
    do {                                                                                           \
        const cudaError_t cwStatus = (expr);                                                       \
        ASSERT_EQ(cwStatus, cudaSuccess) << #expr << ": " << cudaGetErrorString(cwStatus);         \
    } while (0)

namespace cw::kernels::cuda {
namespace {

template <typename T> class DeviceArray {
public:
    DeviceArray() = default;
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    ~DeviceArray() { cudaFree(m_data); }
    cudaError_t allocate(std::size_t count)
    {
        m_count = count;
        return cudaMalloc(
            reinterpret_cast<void**>(&m_data), std::max<std::size_t>(count, 1) * sizeof(T));
    }
    cudaError_t upload(const std::vector<T>& host)
    {
        const cudaError_t status = allocate(host.size());
        return status != cudaSuccess
            ? status
            : cudaMemcpy(m_data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    }
    cudaError_t download(std::vector<T>& host) const
    {
        host.resize(m_count);
        return cudaMemcpy(host.data(), m_data, m_count * sizeof(T), cudaMemcpyDeviceToHost);
    }
    cudaError_t poison() { return cudaMemset(m_data, 0xff, m_count * sizeof(T)); } // NaN floats
    T* get() const { return m_data; }

private:
    T* m_data = nullptr;
    std::size_t m_count = 0;
};

std::vector<float> randomVector(std::size_t n, std::mt19937& rng, float lo = -2.0f, float hi = 2.0f)
{
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

// ||out - ref|| / ||ref|| over the values of `ref` rows (n values every stride), reported.
double relativeError(const char* what, const std::vector<float>& out, const std::vector<float>& ref,
    std::int64_t rows, std::int64_t n, std::int64_t stride)
{
    double diff = 0.0, norm = 0.0, maxAbs = 0.0;
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::size_t at = std::size_t(r * stride + i);
            const double d = double(out[at]) - double(ref[at]);
            diff += d * d;
            norm += double(ref[at]) * double(ref[at]);
            maxAbs = std::max(maxAbs, std::fabs(d));
            if (!std::isfinite(out[at]))
                return INFINITY;
        }
    const double rel = std::sqrt(diff / norm);
    std::printf("[%s] relative %.3g, max abs %.3g\n", what, rel, maxAbs);
    return rel;
}

TEST(RowOps, rmsNormRowsMatchesCpuWithStridesWeightsAndInPlace)
{
    std::mt19937 rng(1);
    const std::int64_t rows = 7, n = 2048, xStride = 2056, outStride = 2050;
    const float eps = 1e-6f;
    const auto x = randomVector(std::size_t(rows * xStride), rng);
    const auto w = randomVector(std::size_t(n), rng, 0.5f, 1.5f);
    DeviceArray<float> dX, dW, dOut;
    CW_CUDA_OK(dX.upload(x));
    CW_CUDA_OK(dW.upload(w));
    CW_CUDA_OK(dOut.allocate(std::size_t(rows * outStride)));
    for (const bool weighted : { true, false }) {
        CW_CUDA_OK(dOut.poison());
        CW_CUDA_OK(rmsNormRows(dX.get(), xStride, weighted ? dW.get() : nullptr, rows, n, eps,
            dOut.get(), outStride, nullptr));
        std::vector<float> out, ref(std::size_t(rows * outStride));
        CW_CUDA_OK(cudaDeviceSynchronize());
        CW_CUDA_OK(dOut.download(out));
        for (std::int64_t r = 0; r < rows; ++r)
            ops::rmsNorm(x.data() + r * xStride, weighted ? w.data() : nullptr, n, eps,
                ref.data() + r * outStride);
        EXPECT_LT(relativeError(weighted ? "rmsNormRows" : "rmsNormRows, no weight", out, ref, rows,
                      n, outStride),
            1e-6);
    }
    // In place, over an odd length.
    const std::int64_t odd = 1001;
    CW_CUDA_OK(
        rmsNormRows(dX.get(), xStride, dW.get(), rows, odd, eps, dX.get(), xStride, nullptr));
    std::vector<float> out, ref = x;
    CW_CUDA_OK(cudaDeviceSynchronize());
    CW_CUDA_OK(dX.download(out));
    for (std::int64_t r = 0; r < rows; ++r)
        ops::rmsNorm(ref.data() + r * xStride, w.data(), odd, eps, ref.data() + r * xStride);
    EXPECT_LT(relativeError("rmsNormRows in place", out, ref, rows, odd, xStride), 1e-6);
    for (std::int64_t r = 0; r < rows; ++r) // past n: untouched
        EXPECT_EQ(out[std::size_t(r * xStride + odd)], x[std::size_t(r * xStride + odd)]);
}

TEST(RowOps, addRmsNormRowsAddsTheResidualThenNorms)
{
    std::mt19937 rng(2);
    const std::int64_t rows = 9, n = 2048;
    const float eps = 1e-6f;
    const auto hidden = randomVector(std::size_t(rows * n), rng);
    const auto delta = randomVector(std::size_t(rows * n), rng);
    const auto w = randomVector(std::size_t(n), rng, 0.5f, 1.5f);
    for (const bool withDelta : { true, false }) {
        DeviceArray<float> dHidden, dDelta, dW, dNormed;
        CW_CUDA_OK(dHidden.upload(hidden));
        CW_CUDA_OK(dDelta.upload(delta));
        CW_CUDA_OK(dW.upload(w));
        CW_CUDA_OK(dNormed.allocate(std::size_t(rows * n)));
        CW_CUDA_OK(dNormed.poison());
        CW_CUDA_OK(addRmsNormRows(dHidden.get(), withDelta ? dDelta.get() : nullptr, dW.get(), rows,
            n, eps, dNormed.get(), nullptr));
        CW_CUDA_OK(cudaDeviceSynchronize());
        std::vector<float> h, normed;
        CW_CUDA_OK(dHidden.download(h));
        CW_CUDA_OK(dNormed.download(normed));
        std::vector<float> hRef = hidden, nRef(hidden.size());
        if (withDelta)
            for (std::size_t i = 0; i < hRef.size(); ++i)
                hRef[i] += delta[i];
        for (std::int64_t r = 0; r < rows; ++r)
            ops::rmsNorm(hRef.data() + r * n, w.data(), n, eps, nRef.data() + r * n);
        // The sum is one f32 addition on both sides: exact.
        EXPECT_EQ(h, hRef);
        EXPECT_LT(relativeError(withDelta ? "addRmsNormRows" : "addRmsNormRows, no delta", normed,
                      nRef, rows, n, n),
            1e-6);
    }
}

// The fused quantization: the normed rows as the integer products read them, checked value by
// value against the rows the same launch wrote in f32 (and those against the CPU's norm), for
// the hidden sizes of the shipped models and one at the kernel's limit.
TEST(RowOps, addRmsNormRowsQuantizedWritesTheNormedRowsAsInt8Blocks)
{
    std::mt19937 rng(12);
    for (const std::int64_t n : { std::int64_t(2048), std::int64_t(4096), std::int64_t(640) }) {
        ASSERT_TRUE(addRmsNormQuantizes(n)) << n;
        const std::int64_t rows = 8;
        const float eps = 1e-6f;
        auto hidden = randomVector(std::size_t(rows * n), rng);
        const auto delta = randomVector(std::size_t(rows * n), rng);
        const auto w = randomVector(std::size_t(n), rng, 0.5f, 1.5f);
        // A zero weight block makes an all-zero quantized block (d = 0).
        auto wz = w;
        std::fill_n(wz.begin(), 32, 0.0f);
        DeviceArray<float> dHidden, dDelta, dW, dNormed;
        DeviceArray<std::int8_t> dQ;
        DeviceArray<float> dS;
        CW_CUDA_OK(dHidden.upload(hidden));
        CW_CUDA_OK(dDelta.upload(delta));
        CW_CUDA_OK(dW.upload(wz));
        CW_CUDA_OK(dNormed.allocate(std::size_t(rows * n)));
        CW_CUDA_OK(dQ.allocate(std::size_t(rows * n)));
        CW_CUDA_OK(dS.allocate(std::size_t(rows * n / 32 * 4)));
        CW_CUDA_OK(dS.poison());
        const Int8Rows out { dQ.get(), reinterpret_cast<float4*>(dS.get()) };
        CW_CUDA_OK(addRmsNormRowsQuantized(
            dHidden.get(), dDelta.get(), dW.get(), rows, n, eps, dNormed.get(), out, nullptr));
        CW_CUDA_OK(cudaDeviceSynchronize());
        std::vector<float> normed, scales;
        std::vector<std::int8_t> q;
        CW_CUDA_OK(dNormed.download(normed));
        CW_CUDA_OK(dQ.download(q));
        CW_CUDA_OK(dS.download(scales));
        std::vector<float> hRef = hidden, nRef(hidden.size());
        for (std::size_t i = 0; i < hRef.size(); ++i)
            hRef[i] += delta[i];
        for (std::int64_t r = 0; r < rows; ++r)
            ops::rmsNorm(hRef.data() + r * n, wz.data(), n, eps, nRef.data() + r * n);
        EXPECT_LT(relativeError("addRmsNormRowsQuantized", normed, nRef, rows, n, n), 1e-6);
        for (std::int64_t b = 0; b < rows * n / 32; ++b) {
            const float* v = normed.data() + b * 32;
            float amax = 0.0f, sum = 0.0f;
            for (int i = 0; i < 32; ++i) {
                amax = std::max(amax, std::fabs(v[i]));
                sum += v[i];
            }
            const float d = scales[std::size_t(b * 4)];
            ASSERT_EQ(d, amax / 127.0f) << "block " << b << ", n " << n;
            EXPECT_EQ(scales[std::size_t(b * 4 + 1)], 0.0f);
            EXPECT_NEAR(scales[std::size_t(b * 4 + 2)], sum, 1e-4f * (1.0f + std::fabs(sum)));
            for (int i = 0; i < 32; ++i) {
                const int expected = amax == 0.0f ? 0 : int(std::lrintf(v[i] * (127.0f / amax)));
                ASSERT_EQ(int(q[std::size_t(b * 32 + i)]), std::clamp(expected, -127, 127))
                    << "block " << b << " value " << i << ", n " << n;
            }
        }
    }
}

// The norm's rows in the routed experts' two planes: the int8 planes and the scales the
// experts' own quantization (quantizeRows, planes 2) gives the same f32 rows, bit for bit; the
// block sums within rounding (summed in another order).
TEST(RowOps, theNormsTwoPlaneRowsAreTheExpertsOwnQuantization)
{
    std::mt19937 rng(13);
    for (const std::int64_t n : { std::int64_t(2048), std::int64_t(640) }) {
        const std::int64_t rows = 3;
        auto hidden = randomVector(std::size_t(rows * n), rng);
        const auto delta = randomVector(std::size_t(rows * n), rng);
        auto w = randomVector(std::size_t(n), rng, 0.5f, 1.5f);
        std::fill_n(w.begin(), 32, 0.0f); // an all-zero block
        DeviceArray<float> dHidden, dDelta, dW, dNormed, dS;
        DeviceArray<std::int8_t> dQ;
        CW_CUDA_OK(dHidden.upload(hidden));
        CW_CUDA_OK(dDelta.upload(delta));
        CW_CUDA_OK(dW.upload(w));
        CW_CUDA_OK(dNormed.allocate(std::size_t(rows * n)));
        CW_CUDA_OK(dQ.allocate(std::size_t(rows * n)));
        CW_CUDA_OK(dS.allocate(std::size_t(rows * n / 32 * 4)));
        const std::size_t bytes = expertInputRowsBytes(rows, n);
        DeviceArray<std::byte> dTwo, dRef;
        CW_CUDA_OK(dTwo.allocate(bytes));
        CW_CUDA_OK(dRef.allocate(bytes));
        CW_CUDA_OK(dTwo.poison());
        const Int8Rows one { dQ.get(), reinterpret_cast<float4*>(dS.get()) };
        const Int8Rows two = expertInputRowsAt(dTwo.get(), rows, n);
        CW_CUDA_OK(addRmsNormRowsQuantized(dHidden.get(), dDelta.get(), dW.get(), rows, n, 1e-6f,
            dNormed.get(), one, nullptr, GatedAddend {}, two));
        quant_detail::QuantizedRows ref;
        CW_CUDA_OK(
            quant_detail::quantizeRows(dNormed.get(), n, rows, n, 2, dRef.get(), ref, nullptr));
        CW_CUDA_OK(cudaDeviceSynchronize());
        std::vector<std::byte> got, want;
        CW_CUDA_OK(dTwo.download(got));
        CW_CUDA_OK(dRef.download(want));
        const std::size_t planeBytes = std::size_t(2 * rows * n);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), planeBytes)) << "n " << n;
        const std::size_t scaleAt = std::size_t(
            reinterpret_cast<const std::byte*>(two.s) - reinterpret_cast<const std::byte*>(two.q));
        for (std::int64_t b = 0; b < rows * n / 32; ++b) {
            float g[4], e[4];
            std::memcpy(g, got.data() + scaleAt + std::size_t(b) * 16, 16);
            std::memcpy(e, want.data() + scaleAt + std::size_t(b) * 16, 16);
            ASSERT_EQ(g[0], e[0]) << "block " << b << ", n " << n;
            ASSERT_EQ(g[1], e[1]) << "block " << b << ", n " << n;
            EXPECT_NEAR(g[2], e[2], 1e-4f * (1.0f + std::fabs(e[2]))) << "block " << b;
        }
    }
}

// The shared expert's gated output folded into the next norm: the same hidden, normed and
// int8 rows, bit for bit, as addGatedSharedExpert then the norm, also when the gate reads the
// rows the norm overwrites (the backend passes the MoE's normed input, which it then replaces).
TEST(RowOps, aGatedAddendInTheNormEqualsTheSharedExpertKernelThenTheNorm)
{
    std::mt19937 rng(31);
    const std::int64_t rows = 5, n = 2048;
    const float eps = 1e-6f;
    const auto hidden = randomVector(std::size_t(rows * n), rng);
    const auto delta = randomVector(std::size_t(rows * n), rng);
    const auto x = randomVector(std::size_t(rows * n), rng);
    const auto down = randomVector(std::size_t(rows * n), rng);
    const auto gateWeight = randomVector(std::size_t(n), rng, -0.05f, 0.05f);
    const auto w = randomVector(std::size_t(n), rng, 0.5f, 1.5f);
    for (const bool quantized : { false, true })
        for (const bool xIsNormed : { false, true }) {
            SCOPED_TRACE(
                std::string(quantized ? "quantized" : "f32") + (xIsNormed ? ", x aliased" : ""));
            std::vector<float> out[2], hOut[2], sOut[2];
            std::vector<std::int8_t> qOut[2];
            for (int fused = 0; fused < 2; ++fused) {
                DeviceArray<float> dHidden, dDelta, dX, dDown, dGate, dW, dNormed, dS;
                DeviceArray<std::int8_t> dQ;
                CW_CUDA_OK(dHidden.upload(hidden));
                CW_CUDA_OK(dDelta.upload(delta));
                CW_CUDA_OK(dX.upload(x));
                CW_CUDA_OK(dDown.upload(down));
                CW_CUDA_OK(dGate.upload(gateWeight));
                CW_CUDA_OK(dW.upload(w));
                CW_CUDA_OK(dNormed.upload(x)); // the aliased case reads x from here
                CW_CUDA_OK(dQ.allocate(std::size_t(rows * n)));
                CW_CUDA_OK(dS.allocate(std::size_t(rows * n / 32 * 4)));
                const float* xRows = xIsNormed ? dNormed.get() : dX.get();
                GatedAddend addend;
                if (fused)
                    addend = { xRows, dGate.get(), dDown.get() };
                else
                    CW_CUDA_OK(addGatedSharedExpert(
                        xRows, dGate.get(), dDown.get(), rows, n, dDelta.get(), nullptr));
                const Int8Rows q { dQ.get(), reinterpret_cast<float4*>(dS.get()) };
                if (quantized)
                    CW_CUDA_OK(addRmsNormRowsQuantized(dHidden.get(), dDelta.get(), dW.get(), rows,
                        n, eps, dNormed.get(), q, nullptr, addend));
                else
                    CW_CUDA_OK(addRmsNormRows(dHidden.get(), dDelta.get(), dW.get(), rows, n, eps,
                        dNormed.get(), nullptr, addend));
                CW_CUDA_OK(cudaDeviceSynchronize());
                CW_CUDA_OK(dNormed.download(out[fused]));
                CW_CUDA_OK(dHidden.download(hOut[fused]));
                if (quantized) {
                    CW_CUDA_OK(dQ.download(qOut[fused]));
                    CW_CUDA_OK(dS.download(sOut[fused]));
                }
            }
            EXPECT_NE(hOut[1], hidden); // the addend and the delta went in
            EXPECT_EQ(hOut[1], hOut[0]);
            EXPECT_EQ(out[1], out[0]);
            EXPECT_EQ(qOut[1], qOut[0]);
            EXPECT_EQ(sOut[1], sOut[0]);
        }
}

TEST(RowOps, gatherF32RowsCopiesTheChosenRows)
{
    std::mt19937 rng(3);
    for (const std::int64_t n : { std::int64_t(2048), std::int64_t(1001) }) {
        const std::int64_t rows = 40;
        const auto x = randomVector(std::size_t(rows * n), rng);
        const std::vector<std::int32_t> pick = { 39, 0, 7, 7, 21, 38 };
        DeviceArray<float> dX, dOut;
        DeviceArray<std::int32_t> dPick;
        CW_CUDA_OK(dX.upload(x));
        CW_CUDA_OK(dPick.upload(pick));
        CW_CUDA_OK(dOut.allocate(pick.size() * std::size_t(n)));
        CW_CUDA_OK(dOut.poison());
        CW_CUDA_OK(gatherF32Rows(
            dX.get(), dPick.get(), std::int64_t(pick.size()), n, dOut.get(), nullptr));
        CW_CUDA_OK(cudaDeviceSynchronize());
        std::vector<float> out;
        CW_CUDA_OK(dOut.download(out));
        for (std::size_t i = 0; i < pick.size(); ++i)
            EXPECT_TRUE(std::equal(out.begin() + std::ptrdiff_t(i * n),
                out.begin() + std::ptrdiff_t((i + 1) * n), x.begin() + std::ptrdiff_t(pick[i] * n)))
                << "row " << i << ", n " << n;
    }
}

TEST(RowOps, countNonFiniteAddsEveryNaNAndInfinityToTheCounter)
{
    std::mt19937 rng(4);
    const std::int64_t n = 3'000'001;
    auto x = randomVector(std::size_t(n), rng, -1e30f, 1e30f);
    const std::int64_t spots[] = { 0, 1, 4095, 777'777, 2'999'999, 3'000'000 };
    for (std::size_t i = 0; i < std::size(spots); ++i)
        x[std::size_t(spots[i])] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
    x[123] = std::numeric_limits<float>::max(); // finite
    x[124] = std::numeric_limits<float>::denorm_min(); // finite
    DeviceArray<float> dX;
    DeviceArray<int> dCount;
    CW_CUDA_OK(dX.upload(x));
    CW_CUDA_OK(dCount.upload({ 5 })); // not reset: the step's counter accumulates
    CW_CUDA_OK(countNonFinite(dX.get(), n, dCount.get(), nullptr));
    CW_CUDA_OK(countNonFinite(dX.get(), 4096, dCount.get(), nullptr)); // spots 0, 1, 4095
    CW_CUDA_OK(cudaDeviceSynchronize());
    std::vector<int> count;
    CW_CUDA_OK(dCount.download(count));
    EXPECT_EQ(count[0], 5 + 6 + 3);
}

TEST(RowOps, argmaxRowsTakesTheLowestIndexAmongEqualMaxima)
{
    std::mt19937 rng(5);
    for (const std::int64_t n :
        { std::int64_t(151'936), std::int64_t(248'320), std::int64_t(37) }) {
        const std::int64_t rows = 4;
        auto x = randomVector(std::size_t(rows * n), rng, -30.0f, 30.0f);
        // Row 0: one clear maximum; row 1: the same maximum twice; row 2: the maximum at the
        // last index; row 3: every value equal.
        x[std::size_t(0 * n + n / 3)] = 99.0f;
        x[std::size_t(1 * n + n - 2)] = 77.0f;
        x[std::size_t(1 * n + 5)] = 77.0f;
        x[std::size_t(2 * n + n - 1)] = 55.0f;
        std::fill_n(x.begin() + std::ptrdiff_t(3 * n), n, -4.0f);
        DeviceArray<float> dX, dValue;
        DeviceArray<std::int32_t> dIndex;
        CW_CUDA_OK(dX.upload(x));
        CW_CUDA_OK(dIndex.allocate(std::size_t(rows)));
        CW_CUDA_OK(dValue.allocate(std::size_t(rows)));
        DeviceArray<std::uint8_t> workspace;
        CW_CUDA_OK(workspace.upload(std::vector<std::uint8_t>(argmaxWorkspaceBytes(rows, n), 0)));
        std::vector<std::int32_t> index;
        std::vector<float> value;
        // On one workspace: a call of one row, then two of all rows. Each call must leave it
        // ready for the next, whatever its row count (a one-row call once left partials over
        // the counters of rows 1 and 2, and the next four-row call never finished those rows).
        for (int call = 0; call < 3; ++call) {
            const std::int64_t callRows = call == 0 ? 1 : rows;
            CW_CUDA_OK(dIndex.upload(std::vector<std::int32_t>(std::size_t(rows), -1)));
            CW_CUDA_OK(argmaxRows(
                dX.get(), callRows, n, dIndex.get(), dValue.get(), workspace.get(), nullptr));
            CW_CUDA_OK(cudaDeviceSynchronize());
            CW_CUDA_OK(dIndex.download(index));
            CW_CUDA_OK(dValue.download(value));
        }
        for (std::int64_t r = 0; r < rows; ++r) {
            const float* row = x.data() + r * n;
            const auto best = std::max_element(row, row + n); // the first of equal maxima
            EXPECT_EQ(index[std::size_t(r)], std::int32_t(best - row))
                << "row " << r << ", n " << n;
            EXPECT_EQ(value[std::size_t(r)], *best) << "row " << r << ", n " << n;
        }
    }
}

} // namespace
} // namespace cw::kernels::cuda
