#pragma once

// Device helpers shared by the MoE kernels.

#include "kernels/cuda/moe/moe_experts.h"

#include <cstdint>

namespace cw::kernels::cuda::moe {

// Row r of expert e of a stack (rowOffset: the up half of a fused gate_up stack).
__device__ __forceinline__ const std::uint8_t* expertRow(
    const DeviceExpertStack& s, std::int64_t e, std::int64_t r)
{
    return static_cast<const std::uint8_t*>(s.data) + std::size_t(e) * s.expertStride
        + std::size_t(s.rowOffset + r) * s.rowStride;
}

// As ops::silu, so the device rounds where the CPU does.
__device__ __forceinline__ float silu(float x)
{
    return x / (1.0f + expf(-x));
}

} // namespace cw::kernels::cuda::moe
