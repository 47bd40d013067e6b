#pragma once

#include <cstdint>

namespace cw::kernels::ops {

// attentionHead (ops.h) with AVX2/FMA: 8-wide score dots and value sums. headDim must be a
// multiple of 8; call only when quant::cpuSupportsAvx2(). Scores, softmax (std::exp, double
// sum) and the order of the value sum over keys are those of the portable version; only the
// sums inside one dot product are grouped differently.
void attentionHeadAvx2(const float* q, std::int64_t qStride, std::int64_t nQ,
    std::int64_t firstQueryPos, const float* const* keys, const float* const* values,
    std::int64_t nKv, std::int64_t headDim, float scale, float* out, std::int64_t outStride,
    float* scratch);

// attentionSharedKv (ops.h) with AVX2/FMA; headDim a multiple of 8; scratch nHeads * nKv.
void attentionSharedKvAvx2(const float* q, std::int64_t qStride, std::int64_t nHeads,
    const float* const* keys, const float* const* values, std::int64_t nKv, std::int64_t headDim,
    float scale, float* out, std::int64_t outStride, float* scratch);

} // namespace cw::kernels::ops
