#pragma once

// The rounding of activations for the integer products, in one place: the products' own
// quantization (int_dot.cu) and the kernels that write those rows for them (the residual
// RMSNorm, the experts' gate/up kernel) must agree bit for bit.

#include <cstdint>

namespace cw::kernels::cuda {

// Rounds v / d, d = amax / 127, to an int8 in [-127, 127] (0 where the block is all zeros).
__device__ __forceinline__ int quantizeToInt8(float v, float amax)
{
    if (amax == 0.0f)
        return 0;
    const int q = __float2int_rn(v * (127.0f / amax));
    return q < -127 ? -127 : q > 127 ? 127 : q;
}

// v - d0 * q0 in one rounding (an explicit fma: every writer of plane 1 agrees whatever the
// compiler contracts).
__device__ __forceinline__ float planeRest(float v, float d0, int q0)
{
    return __fmaf_rn(-d0, float(q0), v);
}

__device__ __forceinline__ float warpMaxF(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

__device__ __forceinline__ float warpSumF(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// One 32-value block b of a token row, one value v per lane of a whole warp, into that row's
// Planes int8 planes (plane p at row + p * cols) and its float4 {d0, d1, sum, 0} at *scale.
template <int Planes>
__device__ __forceinline__ void quantizeBlockPlanes(
    float v, std::int8_t* row, std::int64_t cols, std::int64_t b, float4* scale)
{
    const int lane = int(threadIdx.x) & 31;
    const float amax0 = warpMaxF(fabsf(v));
    const int q0 = quantizeToInt8(v, amax0);
    const float d0 = amax0 / 127.0f;
    row[32 * b + lane] = std::int8_t(q0);
    float d1 = 0.0f;
    if constexpr (Planes > 1) {
        // What plane 0 left, at most half a step: plane 1 brings the error to ~1/127 of that.
        const float rest = planeRest(v, d0, q0);
        const float amax1 = warpMaxF(fabsf(rest));
        row[cols + 32 * b + lane] = std::int8_t(quantizeToInt8(rest, amax1));
        d1 = amax1 / 127.0f;
    }
    const float sum = warpSumF(v);
    if (lane == 0)
        *scale = make_float4(d0, d1, sum, 0.0f);
}

} // namespace cw::kernels::cuda
