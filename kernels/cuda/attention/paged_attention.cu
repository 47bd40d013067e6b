// pagedAttention: decode steps (one token per sequence) take flash-decoding, every other
// step the tensor-core kernel, or the f32 one when the shape asks for exactPrefill; both
// handle sequences of one token among longer ones too.
#include "kernels/cuda/attention/attention_paths.h"
#include "kernels/cuda/attention/paged_attention.h"

namespace cw::kernels::cuda {
namespace {

bool supported(const AttentionShape& shape, const PagedKv& kv)
{
    return shape.heads > 0 && shape.kvHeads > 0 && shape.heads % shape.kvHeads == 0
        && kv.kvWidth == shape.kvHeads * shape.headDim;
}

bool decodeStep(const StepLayout& layout)
{
    return layout.maxTokensPerSequence <= 1;
}

} // namespace

cudaError_t pagedAttention(const float* q, const float* gate, std::int64_t gateStride,
    const AttentionShape& shape, float scale, const StepLayout& layout, PagedKv kv, int layer,
    float* out, DeviceScratch scratch, cudaStream_t stream)
{
    if (layout.rows <= 0 || layout.sequences <= 0)
        return cudaSuccess;
    if (!pagedAttentionTakesHeadDim(shape.headDim))
        return cudaErrorNotSupported;
    if (!supported(shape, kv) || layout.maxContext <= 0)
        return cudaErrorInvalidValue;
    if (decodeStep(layout))
        return attention_detail::launchDecodeAttention(
            q, gate, gateStride, shape, scale, layout, kv, layer, out, scratch, stream);
    if (shape.exactPrefill)
        return attention_detail::launchExactPrefillAttention(
            q, gate, gateStride, shape, scale, layout, kv, layer, out, stream);
    return attention_detail::launchPrefillAttention(
        q, gate, gateStride, shape, scale, layout, kv, layer, out, scratch, stream);
}

std::size_t pagedAttentionScratchBytes(const AttentionShape& shape, const StepLayout& layout)
{
    if (layout.rows <= 0 || layout.sequences <= 0 || shape.kvHeads <= 0 || shape.heads <= 0)
        return 0;
    if (decodeStep(layout))
        return attention_detail::decodeScratchBytes(shape, layout);
    return shape.exactPrefill ? 0 : attention_detail::prefillScratchBytes(shape, layout);
}

} // namespace cw::kernels::cuda
