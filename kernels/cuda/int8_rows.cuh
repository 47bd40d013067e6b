#pragma once

// Writing Int8Rows (cuda_step.h) from the kernels that produce a product's input, with the
// rounding of the products' own quantization (quant/int_dot.cu): d = amax / 127, q =
// round(v / d) clamped to [-127, 127], 0 for an all-zero block.

#include "kernels/cuda/cuda_step.h"

#include <cstdint>

namespace cw::kernels::cuda {

__device__ __forceinline__ std::int8_t int8Of(float v, float inverseStep)
{
    const int q = __float2int_rn(v * inverseStep);
    return std::int8_t(q < -127 ? -127 : q > 127 ? 127 : q);
}

// One 32-value block, one value per lane of a whole warp: values [col0, col0 + 32) of `row`
// (col0 a multiple of 32) in rows of `cols` values.
__device__ __forceinline__ void storeInt8Block(
    float v, Int8Rows out, std::int64_t row, std::int64_t cols, std::int64_t col0)
{
    float amax = fabsf(v), sum = v;
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, m));
        sum += __shfl_xor_sync(0xffffffffu, sum, m);
    }
    const int lane = int(threadIdx.x) & 31;
    out.q[row * cols + col0 + lane] = int8Of(v, amax == 0.0f ? 0.0f : 127.0f / amax);
    if (lane == 0)
        out.s[row * (cols / 32) + col0 / 32] = make_float4(amax / 127.0f, 0.0f, sum, 0.0f);
}

} // namespace cw::kernels::cuda
