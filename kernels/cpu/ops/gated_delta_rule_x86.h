#pragma once

#include <cstdint>

namespace cw::kernels::ops {

// gatedDeltaRuleChunked and gatedDeltaRuleRecurrent (ops.h) on x86 vector registers: the
// chunk's products as register-tiled FMA loops over dv/dk and the decode step as one sweep
// over the state per column block (gated_delta_rule_tiles.h). The same operations in the same
// order as the portable versions, except that each multiply-add rounds once, exp is a
// polynomial (about 1 ulp; 0 below exp(-87)) and subnormal floats are flushed to zero while
// they run.
// Avx2: dk and dv multiples of 8, call only when quant::cpuSupportsAvx2().
// Avx512: dk and dv multiples of 16, call only when quant::cpuSupportsAvx512().
void gatedDeltaRuleChunkedAvx2(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk);
void gatedDeltaRuleChunkedAvx512(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk);

void gatedDeltaRuleRecurrentAvx2(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride);
void gatedDeltaRuleRecurrentAvx512(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride);

} // namespace cw::kernels::ops
