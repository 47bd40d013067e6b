#pragma once

#include <cstdint>

namespace cw::kernels::ops {

// causalConv1dSilu and gatedRmsNorm (ops.h) on x86 vector registers (delta_net_rows.h):
// channels, or a row's values, across the lanes. The same operations in the same order as the
// portable versions, rounding for rounding (the convolution's products and sums are separate
// multiplies and adds, not FMAs), except that exp is a polynomial (about 1 ulp). Call the Avx2 ones
// only when quant::cpuSupportsAvx2(), the Avx512 ones only when quant::cpuSupportsAvx512(). The
// convolution: kernel 2, 3 or 4 (kConvVectorKernelMax), any channel count.
constexpr int kConvVectorKernelMin = 2, kConvVectorKernelMax = 4;
void causalConv1dSiluAvx2(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride);
void causalConv1dSiluAvx512(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride);

// The gated norm: n a multiple of 8 (Avx2) or 16 (Avx512).
void gatedRmsNormAvx2(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps);
void gatedRmsNormAvx512(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps);

} // namespace cw::kernels::ops
