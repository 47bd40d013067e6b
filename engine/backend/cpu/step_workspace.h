#pragma once

// Buffers one forward step reuses from layer to layer and step to step. A 512-token prefill
// needs tens of MB of temporaries per layer; allocations that large come from fresh mmap'd
// pages, and touching them cost hundreds of thousands of page faults per prompt (about a
// tenth of its CPU time). Vectors here only grow; callers resize to what they use.

#include "kernels/cpu/quant/q8_k.h"

#include <vector>

namespace cw::engine {

struct StepWorkspace {
    std::vector<float> hidden, normed, delta; // [T][hidden]
    std::vector<float> queryGate, keys, values, queries, attention; // attention layer
    // DeltaNet layer: projections, convolution output, the recurrence's output.
    std::vector<float> deltaQkv, deltaZ, deltaBeta, deltaAlpha, deltaConv, deltaCore;
    std::vector<float> routerLogits, sharedGate, sharedUp, sharedDown; // MoE, [T][...]
    std::vector<float> expertInput, expertGate, expertUp, expertDown; // MoE, (expert, token) pairs
    std::vector<kernels::quant::BlockQ8K> expertInputQ8K, expertHiddenQ8K; // the same as Q8_K
    std::vector<kernels::quant::BlockQ8K> quantized; // activations as Q8_K for linear()
};

} // namespace cw::engine
