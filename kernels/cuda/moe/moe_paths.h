#pragma once

// The two ways routedExperts runs, and the scratch layout they share (internal to
// kernels/cuda/moe/). Decode-sized batches take one kernel per matrix over (token, choice)
// pairs straight from device memory; larger batches group the pairs by expert on the device
// and run grouped products over per-expert tiles. Both size their grids from the token count
// only, so either can be captured in a CUDA graph.

#include "kernels/cuda/moe/moe_experts.h"

#include <cstddef>
#include <cstdint>

namespace cw::kernels::cuda::moe {

// Token rows at or under kDecodeMaxTokens take the per-(token, choice) kernels reading rows
// straight from device memory; above it, per-expert tiles (bf16 tensor cores, or f32 FMA for
// GemmPrecision::Float32/TensorFloat32). The grouped matrix-vector path (pairs grouped by
// expert, each expert's rows read once for all its tokens) serves the batches up to
// kGroupedMatVecMaxTokens and the shapes the tiles cannot take. Measured on the H200 (sm_90),
// Qwen3.6 shapes (moe_experts_bench, median): 32 tokens direct 599 us, matvec 624 us, tiles 992 us;
// 64 tokens direct 1173 us, matvec 894 us; 128 tokens matvec 1327 us, tiles 1542 us; 256 tokens
// matvec 2205 us, tiles 1563 us.
constexpr std::int64_t kDecodeMaxTokens = 32;

// From kDecodeMaxTokens + 1 to kGroupedMatVecMaxTokens token rows the grouped matrix-vector path
// (each expert's rows read once for its few tokens) beats the tiles, which waste most of a
// 128-row tile below 128 (figures above: 894 against 1,173 us at 64 tokens, 1,327 against
// 1,542 at 128). Its products are f32, at least as precise as any precision asked for.
constexpr std::int64_t kGroupedMatVecMaxTokens = 128;

// Token rows per tile of one expert in the grouped products (not measured; chosen by
// reasoning: the bf16 tile is moe_grouped_gemm.cu's 128 x 128, the f32 one its 64 x 64).
constexpr int kTileRowsBf16 = 128;
constexpr int kTileRowsF32 = 64;

// The bf16 tiles step k by 64 values; other shapes (the tiny test models') take the f32 tiles.
// Measured on the H200 (sm_90), 2026-12-02, in one change with others: moe_grouped_gemm.cu.
constexpr int kTileStepBf16 = 64;

// The bf16 tiles hold their token and hidden rows as 32-bit element offsets (usesBf16Tiles
// checks that they fit); an expert stack is kept under 4 GiB as when its rows were byte
// offsets too. Their chunk loads read up to 16 aligned bytes (Q4_K, Q5_K), so a stack starts
// on a 16-byte boundary (rows are whole blocks apart, as dequant.cuh asks).
inline bool fitsTileOffsets(const DeviceExpertStack& s)
{
    return std::uint64_t(s.experts) * s.expertStride < 0xFFFFFFFFull
        && reinterpret_cast<std::uintptr_t>(s.data) % 16 == 0;
}

inline bool usesBf16Tiles(GemmPrecision precision, std::int64_t tokens, int k,
    const DeviceExpertStack& gate, const DeviceExpertStack& up, const DeviceExpertStack& down)
{
    // TensorFloat32 has no kernel of its own: it takes the f32 path, which is at least as
    // precise as asked.
    constexpr std::int64_t kMaxOffset = 0x7FFFFFFF;
    return precision == GemmPrecision::BFloat16 && gate.cols % kTileStepBf16 == 0
        && down.cols % kTileStepBf16 == 0 && tokens * gate.cols <= kMaxOffset
        && tokens * k * down.cols <= kMaxOffset && fitsTileOffsets(gate) && fitsTileOffsets(up)
        && fitsTileOffsets(down);
}

// Where the grouped path keeps its arrays inside the caller's scratch.
struct GroupedLayout {
    std::int32_t* counts = nullptr; // [experts] pairs per expert
    std::int32_t* offsets = nullptr; // [experts + 1] first sorted position of each expert
    std::int32_t* tileOffsets = nullptr; // [experts + 1] first tile of each expert
    std::int32_t* activeExperts = nullptr; // [experts] experts with pairs, ascending
    std::int32_t* activeCount = nullptr; // [1] how many
    std::int32_t* sortedPair = nullptr; // [pairs] pair index (t * k + j) at each sorted position
    std::int32_t* pairPos = nullptr; // [pairs] sorted position of each pair
    std::uint16_t* xb = nullptr; // bf16 tiles: [tokens][hidden] the token rows in bf16
    void* hidden = nullptr; // [pairs][ffn] silu(gate) * up, bf16 or f32, in sorted order
    float* down = nullptr; // [pairs][hidden] down products in sorted order (unweighted)
    std::size_t bytes = 0; // total, from the base
};

GroupedLayout groupedLayout(std::byte* base, std::int64_t tokens, int k, std::int64_t experts,
    std::int64_t ffn, std::int64_t hidden, bool bf16);
std::size_t decodeScratchBytes(std::int64_t tokens, int k, std::int64_t ffn);

// The capacity of tiles over all experts: every expert may end in a partial tile.
inline std::int64_t maxTiles(std::int64_t pairs, std::int64_t experts, int tileRows)
{
    return (pairs + tileRows - 1) / tileRows + (experts < pairs ? experts : pairs);
}

// The paths, callable one by one (tests and the benchmark compare them). Decode: rows staged
// in shared memory (moe_expert_mat_vec.cu); DecodeDirect: rows read straight from device
// memory, any gate and up types (moe_decode.cu); GroupedMatVec: grouped, f32 FMA;
// GroupedTiles: grouped, per-expert tiles, bf16 tensor cores or f32 FMA.
cudaError_t routedExpertsDecode(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream);
cudaError_t routedExpertsDecodeDirect(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream);
cudaError_t routedExpertsGroupedMatVec(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream);
cudaError_t routedExpertsGroupedTiles(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, GemmPrecision precision, DeviceScratch scratch,
    cudaStream_t stream);

// DecodeInt8 (moe_decode.cu): integer products (kernels/cuda/quant/int_dot.cuh) on x
// quantized once per token row and h once per pair, for GemmPrecision other than Float32:
// quantize x, one launch for gate + up + silu of every (token, choice) pair, quantize h, one
// launch for down with the weighted sum over each token's choices in ascending expert order
// (`aids`, moe_experts.h, take the first quantize launch off).
// cudaErrorNotSupported where intDecodeSupports is false (F32/F16/BF16, gate and up of
// different types, misaligned stacks, down rows of a unit count that does not divide a warp).
bool intDecodeSupports(std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& up, const DeviceExpertStack& down);
std::size_t intDecodeScratchBytes(
    std::int64_t tokens, int k, std::int64_t ffn, std::int64_t hidden);
cudaError_t routedExpertsDecodeInt8(const float* x, std::int64_t tokens, const std::int32_t* ids,
    const float* weights, int k, const DeviceExpertStack& gate, const DeviceExpertStack& up,
    const DeviceExpertStack& down, float* out, DeviceScratch scratch, cudaStream_t stream,
    const ExpertDecodeAids& aids = {});

// Grouping (moe_grouping.cu): counts, offsets, tiles, active experts and the sorted pair order.
cudaError_t groupPairsByExpert(const std::int32_t* ids, std::int64_t pairs, std::int64_t experts,
    int tileRows, const GroupedLayout& layout, cudaStream_t stream);
// out[t] = sum over t's choices in ascending expert order of weight * down row.
cudaError_t combineExpertRows(const GroupedLayout& layout, std::int64_t tokens, int k,
    const std::int32_t* ids, const float* weights, std::int64_t hidden, float* out,
    cudaStream_t stream);

// Grouped products (moe_grouped_gemm.cu): hidden = silu(X G^T) * (X U^T) per expert tile,
// then down = hidden Down^T.
cudaError_t groupedGateUp(const float* x, std::int64_t tokens, int k, const DeviceExpertStack& gate,
    const DeviceExpertStack& up, const GroupedLayout& layout, bool bf16, cudaStream_t stream);
cudaError_t groupedDown(std::int64_t tokens, int k, const DeviceExpertStack& down,
    const GroupedLayout& layout, bool bf16, cudaStream_t stream);

} // namespace cw::kernels::cuda::moe
