#pragma once

// The Gated DeltaNet core of a Qwen3.5 linear-attention layer on the device, between its input
// projections and its output projection: causal conv1d + SiLU with a rolling state, q/k L2
// normalisation, the decay and beta gates, the gated delta rule (recurrent for decode,
// chunk-parallel WY form for prefill, as flash-linear-attention's chunk_gated_delta_rule),
// and the gated RMSNorm. The same formulas as the CPU's engine/models/layers.cpp
// deltaNetLayer with kernels/cpu/ops.
//
// All functions enqueue on `stream`, never synchronise, never allocate, and return the launch
// error.

#include "kernels/cuda/cuda_step.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace cw::kernels::cuda {

struct DeltaNetShape {
    std::int32_t keyHeads = 0; // nK
    std::int32_t valueHeads = 0; // nV (nV % nK == 0)
    std::int32_t keyDim = 0; // dk
    std::int32_t valueDim = 0; // dv
    std::int32_t convKernel = 0; // kernel width (4)
    bool valueHeadsTiled = true; // value head j reads key head j % nK (GGUF); else j / (nV/nK)
    float eps = 1e-6f; // gated RMSNorm
    std::int32_t convDim() const { return 2 * keyHeads * keyDim + valueHeads * valueDim; }
};

// The recurrent states of one DeltaNet layer for every state slot:
//   conv:      [slots][convDim][convKernel], a ring of each channel's inputs: the input at
//              position p (layout.rowPos) at index p mod convKernel. The last convKernel - 1
//              inputs are the state; the spare entry lets a decode step write its input
//              where no block of the same step reads (blocks that share a key head compute
//              its conv alike and would race on an in-place shift).
//   recurrent: [slots][nV][dk][dv] (row-major per head)
//   counters:  [slots][nV] ints, zero between steps (a decode step's blocks of a head count
//              themselves done on them and the last resets them); may be shared by layers.
// A sequence's slot is layout.stateSlots[s]; its positions count the inputs its state has seen
// (a fresh, zeroed state starts at 0).
struct DeltaNetStates {
    float* conv = nullptr;
    float* recurrent = nullptr;
    int* counters = nullptr;
};
inline std::size_t deltaNetConvStateFloats(const DeltaNetShape& shape)
{
    return std::size_t(shape.convDim()) * std::size_t(shape.convKernel);
}

// Per sequence s of the layout, over its rows:
//  1. conv[t][c] = silu(sum_i convWeight[c][i] * in[t - (K-1) + i][c]) where inputs before
//     the step come from the conv state, which then holds the step's inputs too;
//     qkv: [T][convDim] (in), convWeight: [convDim][K];
//  2. the 2 nK query and key heads of each conv row (dk values each) L2-normalised
//     (x / sqrt(sum x^2 + 1e-6));
//  3. g[t][j] = negA[j] * softplus(alpha[t][j] + dtBias[j]), beta[t][j] = sigmoid(beta[t][j])
//     (alpha, beta: [T][nV] raw projections, rewritten in place);
//  4. the gated delta rule per value head j, with the query scaled by 1/sqrt(dk):
//     S = exp(g) S; S += k (beta (v - S^T k))^T; o = S^T q — token by token when a sequence
//     has one token in the step (all of 1-4 in one kernel then), chunk by chunk (64 tokens)
//     otherwise; the state is updated;
//  5. core[t][j] = rmsNorm(o, normWeight [dv], eps) * silu(z[t][j]) (z: [T][nV dv]).
// core: [T][nV dv] (out). scratch: deltaNetScratchBytes.
cudaError_t gatedDeltaNet(const float* qkv, float* alpha, float* beta, const float* z,
    const float* convWeight, const float* dtBias, const float* negA, const float* normWeight,
    const DeltaNetShape& shape, const StepLayout& layout, DeltaNetStates states, float* core,
    DeviceScratch scratch, cudaStream_t stream);
std::size_t deltaNetScratchBytes(const DeltaNetShape& shape, const StepLayout& layout);

} // namespace cw::kernels::cuda
