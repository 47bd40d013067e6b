// attentionPrepare: per-head RMSNorm and NeoX rotary of the queries and keys of a step, the
// keys and values stored into the paged cache. One warp per head of a row: a head (<= 256
// values) sits in the warp's shared buffer while its pairs rotate.
#include "kernels/cuda/attention/kv_rows.cuh"
#include "kernels/cuda/attention/paged_attention.h"
#include "kernels/cuda/chained_launch.cuh"

#include <cstdint>
#include <cuda_runtime.h>

namespace cw::kernels::cuda {
namespace {

using attention_detail::KvRows;

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 256;

struct PrepareParams {
    const float* qAll;
    std::int64_t qAllStride;
    const float* k;
    const float* v;
    const float* qNorm;
    const float* kNorm;
    const float* invFreq;
    float* q;
    const std::int32_t* rowSeq;
    const std::int32_t* rowPos;
    KvRows cache;
    std::int32_t heads, kvHeads, headDim, ropeDim;
    bool gated;
    float eps;
};

__global__ void __launch_bounds__(kWarps * 32) attentionPrepareKernel(PrepareParams p)
{
    chainedKernelEntry();
    __shared__ float buffer[kWarps][kMaxHeadDim];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int head = blockIdx.y * kWarps + warp;
    if (head >= p.heads + p.kvHeads)
        return;
    const std::int64_t t = blockIdx.x;
    const int hd = p.headDim;
    const int pos = p.rowPos[t];
    const bool isQuery = head < p.heads;
    const int kvHead = head - p.heads;
    const float* src = isQuery
        ? p.qAll + t * p.qAllStride + std::int64_t(head) * (p.gated ? 2 * hd : hd)
        : p.k + t * std::int64_t(p.kvHeads) * hd + std::int64_t(kvHead) * hd;
    const float* w = isQuery ? p.qNorm : p.kNorm;
    float* buf = buffer[warp];

    float sum = 0.0f;
    for (int d = lane; d < hd; d += 32) {
        const float x = src[d];
        buf[d] = x;
        sum += x * x;
    }
    for (int m = 16; m > 0; m >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, m);
    // As ops::rmsNorm: the scale in double, x * scale * w in float.
    const float scale = float(1.0 / sqrt(double(sum) / double(hd) + double(p.eps)));
    for (int d = lane; d < hd; d += 32)
        buf[d] = w ? buf[d] * scale * w[d] : buf[d] * scale;
    __syncwarp();
    const int half = p.ropeDim / 2;
    for (int i = lane; i < half; i += 32) {
        const float angle = float(pos) * p.invFreq[i]; // f32 as ops::ropeNeox
        float s, c;
        sincosf(angle, &s, &c);
        const float a = buf[i], b = buf[i + half];
        buf[i] = a * c - b * s;
        buf[i + half] = b * c + a * s;
    }
    __syncwarp();

    if (isQuery) {
        float* dst = p.q + (t * p.heads + head) * hd;
        for (int d = lane; d < hd; d += 32)
            dst[d] = buf[d];
        return;
    }
    const std::int64_t row = p.cache.keyOffset(p.rowSeq[t], pos) + std::int64_t(kvHead) * hd;
    float* key = p.cache.base + row;
    float* value = key + p.cache.valueOffset();
    const float* v = p.v + t * std::int64_t(p.kvHeads) * hd + std::int64_t(kvHead) * hd;
    for (int d = lane; d < hd; d += 32) {
        key[d] = buf[d];
        value[d] = v[d];
    }
}

} // namespace

cudaError_t attentionPrepare(const float* qAll, std::int64_t qAllStride, const float* k,
    const float* v, const float* qNorm, const float* kNorm, const float* invFreq,
    const AttentionShape& shape, const StepLayout& layout, PagedKv kv, int layer, float* q,
    cudaStream_t stream)
{
    if (layout.rows <= 0)
        return cudaSuccess;
    if (shape.headDim <= 0 || shape.headDim > kMaxHeadDim || shape.ropeDim > shape.headDim
        || shape.ropeDim % 2 != 0 || shape.kvHeads <= 0
        || kv.kvWidth != shape.kvHeads * shape.headDim)
        return cudaErrorInvalidValue;
    PrepareParams p;
    p.qAll = qAll;
    p.qAllStride = qAllStride;
    p.k = k;
    p.v = v;
    p.qNorm = qNorm;
    p.kNorm = kNorm;
    p.invFreq = invFreq;
    p.q = q;
    p.rowSeq = layout.rowSeq;
    p.rowPos = layout.rowPos;
    p.cache = attention_detail::makeKvRows(kv, layer, layout);
    p.heads = shape.heads;
    p.kvHeads = shape.kvHeads;
    p.headDim = shape.headDim;
    p.ropeDim = shape.ropeDim;
    p.gated = shape.gated;
    p.eps = shape.eps;
    const dim3 grid(
        unsigned(layout.rows), unsigned((shape.heads + shape.kvHeads + kWarps - 1) / kWarps));
    launchChained(attentionPrepareKernel, dim3(grid), dim3(kWarps * 32), 0, stream, p);
    return cudaGetLastError();
}

} // namespace cw::kernels::cuda
