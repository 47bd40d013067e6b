#pragma once

// Element-wise and small reduction kernels of the forward pass on float32 activations.
// They know vectors and shapes, not layers: the model graphs in engine/models/ call them.

#include <cstdint>

namespace cw::kernels::ops {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i]; w may be null (no scale). out may alias x.
void rmsNorm(const float* x, const float* w, std::int64_t n, float eps, float* out);

// x[i] *= 1 / sqrt(sum(x^2) + eps) (the FLA / transformers l2norm).
void l2Normalize(float* x, std::int64_t n, float eps);

float silu(float x);
float sigmoid(float x);
float softplus(float x); // log(1 + exp(x)), as torch (threshold 20)

// In place: x[i] = silu(gate[i]) * x[i].
void siluMul(float* x, const float* gate, std::int64_t n);

// Numerically stable softmax in place.
void softmax(float* x, std::int64_t n);

// Rotary embedding "NeoX" style (rotate_half) on the first ropeDim values of one head:
// pairs (i, i + ropeDim/2) for i < ropeDim/2 rotate by pos * invFreq[i]. Values past
// ropeDim pass unchanged.
void ropeNeox(float* head, std::int64_t ropeDim, const float* invFreq, std::int64_t pos);
// invFreq[i] = theta^(-2i/ropeDim), i < ropeDim/2, computed as transformers does.
void ropeInverseFrequencies(double theta, std::int64_t ropeDim, float* invFreq);

// Top-k of n values (largest first; ties keep the lower index). k <= n.
void topK(const float* x, std::int64_t n, int k, int* index, float* value);

// Causal depthwise conv1d with a rolling state, then SiLU. For each of `channels` channels,
// with kernel w[c*kernel .. c*kernel+kernel) and state the previous kernel-1 inputs
// (state[c*(kernel-1) + j], oldest first):
// out[t][c] = silu(sum_i w[c][i] * in[t - (kernel-1) + i][c]). in/out are [nTokens][channels]
// with row strides inStride/outStride; out must not overlap in (the vector versions read
// earlier input rows after writing earlier output rows). The state is updated to the last
// kernel-1 inputs.
// Runs on AVX-512 or AVX2/FMA when the CPU has them and kernel is 2-4 (delta_net_rows_x86.h:
// the same sums rounded the same way, exp a polynomial), else portable loops.
void causalConv1dSilu(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride);

// The gated RMSNorm of the DeltaNet output (transformers' Qwen3NextRMSNormGated), in place on
// `rows` contiguous rows of n values: x = rmsNorm(x, w, eps) * silu(gate), gate rows alike;
// the same as rmsNorm then siluMul on each row. Vector versions when n fills whole registers.
void gatedRmsNorm(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps);

// One head of the gated delta rule, token by token. state is [dk][dv] (row-major).
// q, k: [nTokens] rows of dk (row stride qkStride), already L2-normalised; q is scaled by
// 1/sqrt(dk) inside. v: rows of dv (stride vStride). g: log decay per token, beta per token.
// out: rows of dv (stride outStride).
void gatedDeltaRuleRecurrent(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride);

// The same result computed chunk-wise (chunks of `chunk` tokens, the WY/UT form of
// transformers' torch_chunk_gated_delta_rule): fewer passes over the state for prefill.
// Both run on AVX-512 or AVX2/FMA when the CPU has them and dk and dv fill whole registers
// (gated_delta_rule_x86.h: the same sums, each multiply-add rounded once), else portable loops.
void gatedDeltaRuleChunked(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk = 64);

// Causal attention of nQ query rows against nKv key/value rows of one head group.
// scores = q.k * scale; query row i sees keys [0, firstQueryPos + i] (keys are positions
// 0..nKv-1). keys/values are given per position as pointers (a paged cache).
// q rows of headDim (stride qStride); out rows of headDim (stride outStride).
void attentionHead(const float* q, std::int64_t qStride, std::int64_t nQ,
    std::int64_t firstQueryPos, const float* const* keys, const float* const* values,
    std::int64_t nKv, std::int64_t headDim, float scale, float* out, std::int64_t outStride,
    float* scratch /* nKv floats */);

// The query heads of one KV group of grouped-query attention for one query position, every
// head seeing all nKv keys: nHeads rows of q (stride qStride) against the same keys and
// values, each key row read once for all of them. Per head, the same result as attentionHead
// with one query at position nKv - 1. scratch: nHeads * nKv floats.
void attentionSharedKv(const float* q, std::int64_t qStride, std::int64_t nHeads,
    const float* const* keys, const float* const* values, std::int64_t nKv, std::int64_t headDim,
    float scale, float* out, std::int64_t outStride, float* scratch);

// True when every value is finite.
bool allFinite(const float* x, std::int64_t n);

} // namespace cw::kernels::ops
