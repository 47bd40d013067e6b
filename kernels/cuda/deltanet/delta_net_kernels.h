#pragma once

// Internal to kernels/cuda/deltanet: the kernels' launchers, shared by gated_delta_net.cu (which
// sequences them) and the per-stage .cu files, and the scratch layout they agree on. Plain C++.

#include "kernels/cuda/cuda_step.h"
#include "kernels/cuda/deltanet/gated_delta_net.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda::deltanet {

inline constexpr int kChunk = 64; // tokens per chunk of the WY form (not measured)
inline constexpr int kMaxHeadDim = 256;
inline constexpr int kMaxConvKernel = 8;

// The shape as the kernels read it (by value, in registers).
struct Dims {
    int nK = 0, nV = 0, dk = 0, dv = 0, kernel = 0, convDim = 0;
    bool tiled = true;
    float eps = 1e-6f;
    float qScale = 1.0f; // 1/sqrt(dk)
};
Dims makeDims(const DeltaNetShape& shape);

// Column widths of the state slice one block owns; 0 picks the default. Exposed for the
// micro-benchmark, which compares them.
struct Tuning {
    int decodeColumns = 0; // 16 or 32
    int chunkColumns = 0; // 16 or 32
    int chunkPipeline = -1; // prefill recurrence: 1 double-buffered, 0 plain, -1 where it fits
};

// Where each piece lives in the scratch (byte offsets, 256-aligned).
//   conv:     prefill, [rows][convDim] conv + SiLU output, q and k L2-normalised; the v
//             part is overwritten by U (the WY-transformed values) per chunk.
//   cum:      [chunks][nV][64] cumulative log decay within each chunk.
//   wT, qT:   [chunks][nV][dk][64] W and Q' = exp(cum) q / sqrt(dk) - QK W, transposed.
struct ScratchLayout {
    std::size_t conv = 0, cum = 0, wT = 0, qT = 0, total = 0;
    int chunkCapacity = 0;
    bool prefill = false;
};
ScratchLayout scratchLayout(const DeltaNetShape& shape, const StepLayout& layout);

// The step's device arrays the kernels read.
struct Rows {
    const std::int32_t* rowSeq = nullptr;
    const std::int32_t* rowPos = nullptr;
    const std::int32_t* seqRow0 = nullptr;
    const std::int32_t* seqTokens = nullptr;
    const std::int32_t* seqPos0 = nullptr;
    const std::int32_t* stateSlots = nullptr;
    int rows = 0;
    int sequences = 0;
};
Rows rowsOf(const StepLayout& layout);

// The ring index of the conv state entry of input position p (p < 0: a fresh state's zeros).
__host__ __device__ inline int convRingIndex(int p, int kernel)
{
    const int r = p % kernel;
    return r < 0 ? r + kernel : r;
}

// Prefill stage 1 (all rows): conv + SiLU, q/k L2 norm, g and beta in place; the conv state is
// read, not written.
cudaError_t launchConvGates(const float* qkv, float* alpha, float* beta, const float* convWeight,
    const float* dtBias, const float* negA, const Dims& dims, const Rows& rows,
    const float* convState, float* conv, cudaStream_t stream);
// Prefill: each sequence's last kernel-1 inputs into its conv state ring (after stage 1).
cudaError_t launchConvStateAdvance(
    const float* qkv, const Dims& dims, const Rows& rows, float* convState, cudaStream_t stream);

// Decode (one row per sequence), stages 1-5 in one kernel: each block computes the conv of its
// key head's q and k and of its own value columns (a head's blocks alike), writes the inputs
// into the conv state ring, runs the recurrent rule on its state columns, and a head's last
// block applies the gated RMSNorm and writes g and beta in place.
cudaError_t launchDecode(const float* qkv, float* alpha, float* beta, const float* z,
    const float* convWeight, const float* dtBias, const float* negA, const float* normWeight,
    const Dims& dims, const Rows& rows, const DeltaNetStates& states, float* core, int columns,
    cudaStream_t stream);

// Prefill, per (sequence, chunk, value head), all chunks in parallel: the UT/WY transform.
// Writes cum, wT, qT, U (over v in conv) and the intra-chunk output into core.
cudaError_t launchChunkTransform(float* conv, const float* g, const float* beta, const Dims& dims,
    const Rows& rows, int chunkCapacity, float* cum, float* wT, float* qT, float* core,
    cudaStream_t stream);
// Prefill, per (sequence, value head, column slice), chunks in order: the state recurrence and
// the inter-chunk output added into core. columns, pipeline: as Tuning's chunk fields.
cudaError_t launchChunkRecurrence(const float* conv, const float* cum, const float* wT,
    const float* qT, const Dims& dims, const Rows& rows, float* recurrent, float* core, int columns,
    int pipeline, cudaStream_t stream);
// Prefill: core = rmsNorm(core) * silu(z) per (row, value head).
cudaError_t launchGatedNorm(const float* z, const float* normWeight, const Dims& dims, int rows,
    float* core, cudaStream_t stream);

// gatedDeltaNet with explicit column widths.
cudaError_t gatedDeltaNetTuned(const float* qkv, float* alpha, float* beta, const float* z,
    const float* convWeight, const float* dtBias, const float* negA, const float* normWeight,
    const DeltaNetShape& shape, const StepLayout& layout, DeltaNetStates states, float* core,
    DeviceScratch scratch, const Tuning& tuning, cudaStream_t stream);

} // namespace cw::kernels::cuda::deltanet
