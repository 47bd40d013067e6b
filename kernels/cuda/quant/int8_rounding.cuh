#pragma once

// The rounding of activations for the integer products, in one place: the products' own
// quantization (int_dot.cu) and the kernels that write those rows for them (the residual
// RMSNorm) must agree bit for bit.

namespace cw::kernels::cuda {

// Rounds v / d, d = amax / 127, to an int8 in [-127, 127] (0 where the block is all zeros).
__device__ __forceinline__ int quantizeToInt8(float v, float amax)
{
    if (amax == 0.0f)
        return 0;
    const int q = __float2int_rn(v * (127.0f / amax));
    return q < -127 ? -127 : q > 127 ? 127 : q;
}

} // namespace cw::kernels::cuda
