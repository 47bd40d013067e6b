// routedExperts: picks its path from the token count (a host capacity, so a captured graph
// always replays the same path) and lays out the scratch of the grouped paths.
#include "kernels/cuda/moe/moe_paths.h"
#include "kernels/cuda/quant/mat_vec.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cw::kernels::cuda {
namespace moe {
namespace {

constexpr std::size_t kAlign = 256;

std::size_t alignUp(std::size_t n)
{
    return (n + kAlign - 1) / kAlign * kAlign;
}

// The grouped paths need one type for gate and up (the tiles also whole k-steps of 32
// values); other shapes take the decode kernels at every size (correct, only slower).
bool groupable(
    const DeviceExpertStack& gate, const DeviceExpertStack& up, const DeviceExpertStack& down)
{
    return gate.type == up.type && gate.rowStride == up.rowStride && down.rows % 4 == 0;
}

bool tileable(const DeviceExpertStack& gate, const DeviceExpertStack& down)
{
    return gate.cols % 32 == 0 && down.cols % 32 == 0;
}

// CW_CUDA_MOE=direct turns the integer decode products off for the whole process (diagnosis,
// A/B runs); unset or anything else: on where they can run.
bool intDecodeAllowed()
{
    static const bool allowed = [] {
        const char* v = std::getenv("CW_CUDA_MOE");
        return !(v && std::strcmp(v, "direct") == 0);
    }();
    return allowed;
}

bool usesIntDecode(std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& up, const DeviceExpertStack& down, GemmPrecision precision)
{
    // Float32 is the exact reference and keeps the f32 kernels. The integer kernels take the f32
    // kernels' bound (moe_paths.h); not measured for them (PERFORMANCE.md: not yet measured).
    return precision != GemmPrecision::Float32 && tokens <= kDecodeMaxTokens && intDecodeAllowed()
        && intDecodeSupports(tokens, k, gate, up, down);
}

} // namespace

GroupedLayout groupedLayout(std::byte* base, std::int64_t tokens, int k, std::int64_t experts,
    std::int64_t ffn, std::int64_t hidden, bool bf16)
{
    const std::size_t pairs = std::size_t(tokens) * std::size_t(k);
    GroupedLayout l;
    std::size_t at = 0;
    auto take = [&](std::size_t bytes) {
        std::byte* p = base ? base + at : nullptr;
        at += alignUp(bytes);
        return p;
    };
    l.counts = reinterpret_cast<std::int32_t*>(take(std::size_t(experts) * 4));
    l.offsets = reinterpret_cast<std::int32_t*>(take(std::size_t(experts + 1) * 4));
    l.tileOffsets = reinterpret_cast<std::int32_t*>(take(std::size_t(experts + 1) * 4));
    l.activeExperts = reinterpret_cast<std::int32_t*>(take(std::size_t(experts) * 4));
    l.activeCount = reinterpret_cast<std::int32_t*>(take(4));
    l.sortedPair = reinterpret_cast<std::int32_t*>(take(pairs * 4));
    l.pairPos = reinterpret_cast<std::int32_t*>(take(pairs * 4));
    if (bf16)
        l.xb
            = reinterpret_cast<std::uint16_t*>(take(std::size_t(tokens) * std::size_t(hidden) * 2));
    l.hidden = take(pairs * std::size_t(ffn) * (bf16 ? 2 : 4));
    l.down = reinterpret_cast<float*>(take(pairs * std::size_t(hidden) * 4));
    l.bytes = at;
    return l;
}

cudaError_t routedExpertsGroupedTiles(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, GemmPrecision precision, DeviceScratch scratch,
    cudaStream_t stream)
{
    const bool bf16 = usesBf16Tiles(precision, tokens, k, gate, up, down);
    const GroupedLayout layout
        = groupedLayout(scratch.data, tokens, k, gate.experts, gate.rows, down.rows, bf16);
    if (layout.bytes > scratch.bytes)
        return cudaErrorInvalidValue;
    cudaError_t err = groupPairsByExpert(
        ids, tokens * k, gate.experts, bf16 ? kTileRowsBf16 : kTileRowsF32, layout, stream);
    if (err == cudaSuccess)
        err = groupedGateUp(x, tokens, k, gate, up, layout, bf16, stream);
    if (err == cudaSuccess)
        err = groupedDown(tokens, k, down, layout, bf16, stream);
    if (err == cudaSuccess)
        err = combineExpertRows(layout, tokens, k, ids, weights, down.rows, out, stream);
    return err;
}

} // namespace moe

cudaError_t routedExperts(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, GemmPrecision precision, DeviceScratch scratch,
    cublasHandle_t, cudaStream_t stream, const ExpertDecodeAids& aids)
{
    if (tokens <= 0)
        return cudaSuccess;
    if (k <= 0 || gate.cols != down.rows || up.rows != gate.rows || down.cols != gate.rows
        || gate.cols % 8 != 0 || down.cols % 8 != 0)
        return cudaErrorInvalidValue;
    // Direct rather than staged rows: on the H200 staging was no faster (30.1 vs 31.3 us for one
    // token), dequant8's arithmetic and not the loads bounds decode.
    if (moe::usesIntDecode(tokens, k, gate, up, down, precision)
        && scratch.bytes >= moe::intDecodeScratchBytes(tokens, k, gate.rows, gate.cols))
        return moe::routedExpertsDecodeInt8(
            x, tokens, ids, weights, k, gate, up, down, out, scratch, stream, aids);
    if (tokens <= moe::kDecodeMaxTokens || !moe::groupable(gate, up, down))
        return moe::routedExpertsDecodeDirect(
            x, tokens, ids, weights, k, gate, up, down, out, scratch, stream);
    // f023f44 kept the grouped mat-vec to the shapes the tiles cannot take, for "different bits
    // on a graph replay at 300 tokens": the test's own mistake (it compared the mat-vec's f32
    // bits with the dispatch's bf16 tiles), fixed in 9223bac.
    if (tokens <= moe::kGroupedMatVecMaxTokens || !moe::tileable(gate, down))
        return moe::routedExpertsGroupedMatVec(
            x, tokens, ids, weights, k, gate, up, down, out, scratch, stream);
    return moe::routedExpertsGroupedTiles(
        x, tokens, ids, weights, k, gate, up, down, out, precision, scratch, stream);
}

bool routedExpertsReadPerChoice(std::int64_t tokens)
{
    return tokens <= moe::kDecodeMaxTokens;
}

std::size_t expertInputRowsBytes(std::int64_t rows, std::int64_t hidden)
{
    return quant_detail::quantizedRowsBytes(rows, hidden, 2);
}

Int8Rows expertInputRowsAt(std::byte* at, std::int64_t rows, std::int64_t hidden)
{
    const quant_detail::QuantizedRows r = quant_detail::quantizedRowsAt(at, rows, hidden, 2);
    return { const_cast<std::int8_t*>(r.q), const_cast<float4*>(r.s) };
}

std::size_t routedExpertsScratchBytes(std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& down, GemmPrecision precision)
{
    std::size_t decode = moe::decodeScratchBytes(tokens, k, gate.rows);
    // The integer decode path's need, whatever the types (the stacks here carry no data): a
    // little more than the f32 hidden rows.
    if (precision != GemmPrecision::Float32 && tokens <= moe::kDecodeMaxTokens && gate.cols > 0)
        decode = std::max(decode, moe::intDecodeScratchBytes(tokens, k, gate.rows, gate.cols));
    if (tokens <= moe::kDecodeMaxTokens)
        return decode;
    // The up stack is not given: it has the gate's shape, and a different type only sends the
    // call to the decode kernels, which need less. Either grouped layout, whatever the precision.
    const std::size_t grouped = std::max(
        moe::groupedLayout(nullptr, tokens, k, gate.experts, gate.rows, down.rows, false).bytes,
        moe::groupedLayout(nullptr, tokens, k, gate.experts, gate.rows, down.rows, true).bytes);
    return grouped > decode ? grouped : decode;
}

} // namespace cw::kernels::cuda
