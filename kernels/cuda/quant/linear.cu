// linear(): the matrix-vector kernels up to kMatVecMaxTokens token rows, cuBLAS on
// dequantized weights above.
//
// The prefill path dequantizes W into scratch in slabs of rows (bf16 or f32, per
// GemmPrecision) and runs one cublasGemmEx per slab; a slab is at most kSlabBytes so the
// 248320-row LM head does not need a gigabyte of scratch. cuBLAS is column-major: the
// row-major y[T][N] = x[T][K] W[N][K]^T is, read column-major, y^T (N x T) = W (N x K, which
// is W's row-major bytes with op T) times x^T (K x T).
#include "kernels/cuda/quant/dequant.cuh"
#include "kernels/cuda/quant/int_dot.cuh"
#include "kernels/cuda/quant/mat_vec.h"
#include "kernels/cuda/quant/quant_internal.h"
#include "kernels/cuda/quant/quant_products.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <library_types.h>
#include <limits>

namespace cw::kernels::cuda {
namespace {

constexpr std::size_t kSlabBytes = std::size_t(64) << 20;
constexpr std::size_t kAlign = 256;

std::size_t alignUp(std::size_t n)
{
    return (n + kAlign - 1) / kAlign * kAlign;
}

bool validMatrix(const DeviceMatrix& w)
{
    const auto traits = tensorTypeTraits(std::uint32_t(w.type));
    return supportsMatrixType(w.type) && traits && w.rows >= 0 && w.cols >= 0
        && w.cols % traits->blockSize == 0 && (w.rows == 0 || w.data != nullptr);
}

// The integer products of args.tokens rows: the matrix-vector kernels up to kMatVecMaxTokens,
// the tensor-core ones above.
struct IntMatVecLaunch {
    const quant_detail::IntMatVecArgs& args;
    cudaError_t& result;
    template <TensorType Type> void operator()() const
    {
        result = cudaErrorInvalidValue;
        if constexpr (int_dot::kHasUnit<Type>)
            if (args.tokens <= kMatVecMaxTokens)
                result = quant_detail::launchIntMatVec<Type>(args);
        if constexpr (int_dot::kHasMmaUnit<Type>)
            if (args.tokens > kMatVecMaxTokens)
                result = quant_detail::launchIntMatMul<Type>(args);
    }
};

struct HasIntMatMul {
    bool& has;
    template <TensorType Type> void operator()() const { has = int_dot::kHasMmaUnit<Type>; }
};

bool hasIntMatMul(TensorType type)
{
    bool has = false;
    dispatchMatrixType(type, HasIntMatMul { has });
    return has;
}

struct MatVecLaunch {
    const quant_detail::MatVecArgs& args;
    cudaError_t& result;
    template <TensorType Type> void operator()() const
    {
        result = quant_detail::launchMatVec<Type>(args);
    }
};

// The prefill layout: W used in place (already the operand type) or dequantized per slab.
struct GemmPlan {
    bool bf16 = false; // operand type: bf16, else f32
    bool inPlace = false; // W's own bytes are the A operand
    std::int64_t slabRows = 0;
    std::size_t xBytes = 0; // bf16 copy of x
    std::size_t slabBytes = 0;
};

GemmPlan planGemm(const DeviceMatrix& w, std::int64_t tokens, GemmPrecision precision)
{
    GemmPlan plan;
    plan.bf16 = precision == GemmPrecision::BFloat16;
    const std::size_t element = plan.bf16 ? 2 : 4;
    plan.inPlace = (plan.bf16 ? w.type == TensorType::BF16 : w.type == TensorType::F32)
        && w.rowStride % element == 0 && reinterpret_cast<std::uintptr_t>(w.data) % 16 == 0;
    if (plan.bf16)
        plan.xBytes = alignUp(std::size_t(tokens) * std::size_t(w.cols) * 2);
    if (w.cols == 0) {
        plan.slabRows = w.rows; // nothing to dequantize; cuBLAS writes zeros for k = 0
    } else if (!plan.inPlace) {
        const std::int64_t fit = std::int64_t(kSlabBytes / (std::size_t(w.cols) * element));
        plan.slabRows = std::min(w.rows, std::max<std::int64_t>(fit / 128 * 128, 128));
        plan.slabBytes = alignUp(std::size_t(plan.slabRows) * std::size_t(w.cols) * element);
    }
    return plan;
}

cudaError_t gemm(const DeviceMatrix& w, const float* x, std::int64_t xStride, std::int64_t tokens,
    float* y, std::int64_t yStride, GemmPrecision precision, DeviceScratch scratch,
    cublasHandle_t cublas, cudaStream_t stream)
{
    const GemmPlan plan = planGemm(w, tokens, precision);
    if (scratch.bytes < plan.xBytes + plan.slabBytes
        || (plan.xBytes + plan.slabBytes > 0 && !scratch.data))
        return cudaErrorInvalidValue;
    // The handle comes bound to `stream` (the contract): setting the stream here would also
    // reset a workspace the caller may have given it.

    const void* b = x;
    cudaDataType_t operandType = CUDA_R_32F;
    std::int64_t ldb = xStride;
    cublasComputeType_t compute = precision == GemmPrecision::Float32 ? CUBLAS_COMPUTE_32F_PEDANTIC
        : precision == GemmPrecision::TensorFloat32                   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                      : CUBLAS_COMPUTE_32F;
    std::byte* slab = scratch.data + plan.xBytes;
    if (plan.bf16) {
        auto* xb = reinterpret_cast<std::uint16_t*>(scratch.data);
        if (const cudaError_t e
            = quant_detail::convertToBf16(x, xStride, tokens, w.cols, xb, stream))
            return e;
        b = xb;
        ldb = w.cols;
        operandType = CUDA_R_16BF;
    }
    const std::size_t element = plan.bf16 ? 2 : 4;
    const float alpha = 1.0f, beta = 0.0f;
    const std::int64_t step = plan.inPlace ? w.rows : plan.slabRows;
    for (std::int64_t r0 = 0; r0 < w.rows; r0 += step) {
        const std::int64_t n = std::min(step, w.rows - r0);
        const void* a;
        std::int64_t lda;
        if (plan.inPlace) {
            a = w.data;
            lda = std::int64_t(w.rowStride / element);
        } else {
            if (const cudaError_t e
                = quant_detail::dequantizeRows(w, r0, n, slab, plan.bf16, stream))
                return e;
            a = slab;
            lda = w.cols;
        }
        const cublasStatus_t status = cublasGemmEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, int(n),
            int(tokens), int(w.cols), &alpha, a, operandType, int(lda), b, operandType, int(ldb),
            &beta, y + r0, CUDA_R_32F, int(yStride), compute, CUBLAS_GEMM_DEFAULT);
        if (status != CUBLAS_STATUS_SUCCESS)
            return status == CUBLAS_STATUS_INVALID_VALUE ? cudaErrorInvalidValue : cudaErrorUnknown;
    }
    return cudaGetLastError();
}

} // namespace

namespace quant_detail {

namespace {
// CW_CUDA_MATVEC=simt|mma|int8 pins the kernel family for a whole process (diagnosis on a
// user's card, and A/B runs of the benchmark; simt or mma also turn the integer products
// off); unset: chosen per call.
MatVecKernel kernelFromEnvironment()
{
    const char* v = std::getenv("CW_CUDA_MATVEC");
    if (v && std::strcmp(v, "simt") == 0)
        return MatVecKernel::Simt;
    if (v && std::strcmp(v, "mma") == 0)
        return MatVecKernel::Mma;
    if (v && std::strcmp(v, "int8") == 0)
        return MatVecKernel::Int8;
    return MatVecKernel::Auto;
}
MatVecKernel g_matVecKernel = kernelFromEnvironment();

IntMatVecLayout layoutFromEnvironment()
{
    const char* v = std::getenv("CW_CUDA_INTMV");
    if (v && std::strcmp(v, "block") == 0)
        return IntMatVecLayout::BlockRow;
    if (v && std::strcmp(v, "warp2") == 0)
        return IntMatVecLayout::WarpTwoRows;
    if (v && std::strcmp(v, "warp") == 0)
        return IntMatVecLayout::WarpRow;
    return IntMatVecLayout::StagedWarpRow;
}
IntMatVecLayout g_intMatVecLayout = layoutFromEnvironment();

// Which matrices take the int8 tensor-core products at 9..kIntMatMulMaxTokens rows: by default
// those of 65,536 rows and more (the LM head, 248k rows, which fills the card: one pass of up
// to 64 rows instead of one 8-row dp4a pass per 8 sequences): at 32 sequences 1,738 -> 1,881
// tok/s on the H200 (tests/bench/results/README.md, 2026-12-03 A/B). Not the dense products
// (at most 16,384 rows in these models): one 4-warp block per 16 weight rows underfills the
// card (110 GB/s on the Q4_K ones), 1,463 tok/s with every matrix on them. CW_CUDA_INTMM=1:
// every matrix; CW_CUDA_INTMM=0: none (cuBLAS on the dequantized copy); CW_CUDA_INTMM=N (N > 1):
// matrices of N rows and more, for A/B runs. A lower bound loses (32 sequences, same call:
// 65,536 rows 1,880-1,885 tok/s, 8,192 1,785-1,787, 4,096 1,717-1,719, 2,048 1,452-1,454):
// the 8,192-row products (DeltaNet qkv, gated attention q) still leave the card underfilled.
constexpr std::int64_t kIntMatMulMinRows = 65536;
constexpr std::int64_t kIntMatMulNone = std::numeric_limits<std::int64_t>::max();
const std::int64_t g_intMatMulMinRowsFromEnvironment = [] {
    const char* v = std::getenv("CW_CUDA_INTMM");
    if (!v || !*v)
        return kIntMatMulMinRows;
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end != '\0' || n < 0)
        return kIntMatMulMinRows;
    return n == 0 ? kIntMatMulNone : std::int64_t(n);
}();
std::int64_t g_intMatMulMinRows = g_intMatMulMinRowsFromEnvironment;

bool takesIntMatMul(const DeviceMatrix& w)
{
    return w.rows >= g_intMatMulMinRows;
}
} // namespace

IntMatVecLayout intMatVecLayout()
{
    return g_intMatVecLayout;
}

void setIntMatVecLayout(IntMatVecLayout layout)
{
    g_intMatVecLayout = layout;
}

StagedRows stagedRows(TensorType type, std::int64_t cols, const IntMatVecTarget* targets, int count)
{
    const auto traits = tensorTypeTraits(std::uint32_t(type));
    const auto row = rowBytes(type, std::uint64_t(cols));
    if (!traits || traits->blockSize <= 1 || !row || std::int64_t(*row) > kMaxStagedRowBytes)
        return {};
    const std::int64_t bytes = std::int64_t(*row);
    for (const int chunk : { 16, 8, 4 }) {
        bool fits = true;
        for (int j = 0; j < count && fits; ++j) {
            const IntMatVecTarget& t = targets[j];
            fits = (reinterpret_cast<std::uintptr_t>(t.w) % std::uintptr_t(chunk)) == 0
                && t.rowStride % std::size_t(chunk) == 0
                && std::int64_t(t.rowStride) >= (bytes + chunk - 1) / chunk * chunk;
        }
        if (fits)
            return { bytes, chunk };
    }
    return {};
}

void setMatVecKernel(MatVecKernel kernel)
{
    g_matVecKernel = kernel;
}

cudaError_t matVec(const DeviceMatrix& w, const float* x, std::int64_t xStride, std::int64_t tokens,
    float* y, std::int64_t yStride, cudaStream_t stream)
{
    if (tokens < 1 || tokens > kMatVecMaxTokens)
        return cudaErrorInvalidValue;
    const MatVecArgs args { static_cast<const std::uint8_t*>(w.data), w.rowStride, w.rows, w.cols,
        x, xStride, tokens, y, yStride, stream, g_matVecKernel };
    cudaError_t result = cudaErrorInvalidValue;
    dispatchMatrixType(w.type, MatVecLaunch { args, result });
    return result;
}

bool usesIntMatVec(const DeviceMatrix& w, std::int64_t tokens, GemmPrecision precision)
{
    // The one switch between the float and the integer products. Float32 is the tests' exact
    // reference and never quantizes its activations.
    const bool wanted
        = g_matVecKernel == MatVecKernel::Auto || g_matVecKernel == MatVecKernel::Int8;
    const bool rows = tokens <= kMatVecMaxTokens
        || (tokens <= kIntMatMulMaxTokens && takesIntMatMul(w) && hasIntMatMul(w.type));
    return wanted && precision != GemmPrecision::Float32 && tokens >= 1 && rows
        && intDotSupports(w.type, w.cols, w.data, w.rowStride);
}

std::size_t intMatVecScratchBytes(const DeviceMatrix& w, std::int64_t tokens)
{
    return quantizedRowsBytes(std::min(tokens, kIntMatMulMaxTokens), w.cols, 1);
}

cudaError_t intMatVec(const DeviceMatrix& w, const float* x, std::int64_t xStride,
    std::int64_t tokens, float* y, std::int64_t yStride, DeviceScratch scratch, cudaStream_t stream)
{
    if (tokens < 1 || tokens > kIntMatMulMaxTokens
        || scratch.bytes < quantizedRowsBytes(tokens, w.cols, 1))
        return cudaErrorInvalidValue;
    QuantizedRows q;
    if (const cudaError_t e = quantizeRows(x, xStride, tokens, w.cols, 1, scratch.data, q, stream))
        return e;
    return intMatVecQuantized(w, q, tokens, y, yStride, stream);
}

cudaError_t intMatVecQuantized(const DeviceMatrix& w, const QuantizedRows& x, std::int64_t tokens,
    float* y, std::int64_t yStride, cudaStream_t stream)
{
    if (!intDotSupports(w.type, w.cols, w.data, w.rowStride) || tokens < 1
        || tokens > kIntMatMulMaxTokens)
        return cudaErrorInvalidValue;
    IntMatVecArgs args;
    args.targets[0] = { static_cast<const std::uint8_t*>(w.data), w.rowStride, w.rows, y, yStride };
    args.cols = w.cols;
    args.x = x;
    args.tokens = tokens;
    args.stream = stream;
    cudaError_t result = cudaErrorInvalidValue;
    dispatchMatrixType(w.type, IntMatVecLaunch { args, result });
    return result;
}

} // namespace quant_detail

void quant_detail::setIntMatMulForAll(bool all)
{
    quant_detail::g_intMatMulMinRows = all ? 1 : quant_detail::g_intMatMulMinRowsFromEnvironment;
}

cudaError_t linear(const DeviceMatrix& w, const float* x, std::int64_t xStride, std::int64_t tokens,
    float* y, std::int64_t yStride, GemmPrecision precision, DeviceScratch scratch,
    cublasHandle_t cublas, cudaStream_t stream)
{
    if (!validMatrix(w) || tokens < 0)
        return cudaErrorInvalidValue;
    if (tokens == 0 || w.rows == 0)
        return cudaSuccess;
    // The integer products need scratch for the quantized activations; a caller that gave
    // less gets the float kernels (same contract, slower).
    if (quant_detail::usesIntMatVec(w, tokens, precision)
        && scratch.bytes >= quant_detail::intMatVecScratchBytes(w, tokens) && scratch.data
        && (reinterpret_cast<std::uintptr_t>(scratch.data) & 255) == 0)
        return quant_detail::intMatVec(w, x, xStride, tokens, y, yStride, scratch, stream);
    if (tokens <= kMatVecMaxTokens)
        return quant_detail::matVec(w, x, xStride, tokens, y, yStride, stream);
    return gemm(w, x, xStride, tokens, y, yStride, precision, scratch, cublas, stream);
}

namespace {

// linearFanOut's one-token products where their matrices are of exactly two types (a K-quant
// mix): one launch where there would be two, if a kernel exists for the pair; `done` marks
// the outputs it computed.
cudaError_t launchTwoTypes(const LinearOutput* outputs, int count, const bool* integer,
    std::int64_t cols, const quant_detail::QuantizedRows& q, cudaStream_t stream, bool* done)
{
    using namespace quant_detail;
    TensorType types[2] {};
    int typeCount = 0, targets = 0;
    for (int i = 0; i < count; ++i) {
        if (!integer[i])
            continue;
        ++targets;
        const TensorType t = outputs[i].w->type;
        if ((typeCount > 0 && types[0] == t) || (typeCount > 1 && types[1] == t))
            continue;
        if (typeCount < 2)
            types[typeCount] = t;
        ++typeCount;
    }
    if (typeCount != 2 || targets > kMaxIntMatVecTargets)
        return cudaSuccess;
    IntMatVecArgs args;
    args.targetCount = 0;
    int countFirst = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < count; ++i) {
            if (!integer[i] || outputs[i].w->type != types[pass])
                continue;
            const DeviceMatrix& w = *outputs[i].w;
            args.targets[args.targetCount++] = { static_cast<const std::uint8_t*>(w.data),
                w.rowStride, w.rows, outputs[i].y, outputs[i].yStride };
            countFirst += pass == 0 ? 1 : 0;
        }
    args.cols = cols;
    args.x = q;
    args.tokens = 1;
    args.stream = stream;
    cudaError_t result = cudaSuccess;
    if (!launchIntMatVecTwoTypes(types[0], types[1], countFirst, args, result))
        return cudaSuccess;
    for (int i = 0; i < count; ++i)
        done[i] = done[i] || integer[i];
    return result;
}

} // namespace

cudaError_t linearFanOut(const LinearOutput* outputs, int count, const float* x,
    std::int64_t xStride, std::int64_t tokens, const Int8Rows* quantized, GemmPrecision precision,
    DeviceScratch scratch, cublasHandle_t cublas, cudaStream_t stream)
{
    using namespace quant_detail;
    if (count < 1 || tokens < 0)
        return cudaErrorInvalidValue;
    for (int i = 0; i < count; ++i)
        if (!outputs[i].w || !validMatrix(*outputs[i].w)
            || outputs[i].w->cols != outputs[0].w->cols)
            return cudaErrorInvalidValue;
    if (tokens == 0)
        return cudaSuccess;
    const std::int64_t cols = outputs[0].w->cols;
    bool integer[kMaxFanOut] {};
    bool anyInteger = false;
    if (count > kMaxFanOut)
        return cudaErrorInvalidValue;
    // `quantized` holds rows of up to kMatVecMaxTokens tokens (the norm writes them).
    if (tokens > kMatVecMaxTokens)
        quantized = nullptr;
    const std::size_t xBytes = quantizedRowsBytes(std::min(tokens, kIntMatMulMaxTokens), cols, 1);
    const bool scratchFits = quantized
        || (scratch.data && scratch.bytes >= xBytes
            && (reinterpret_cast<std::uintptr_t>(scratch.data) & 255) == 0);
    for (int i = 0; i < count; ++i) {
        integer[i] = scratchFits && outputs[i].w->rows > 0
            && usesIntMatVec(*outputs[i].w, tokens, precision);
        anyInteger = anyInteger || integer[i];
    }
    if (anyInteger) {
        QuantizedRows q { quantized ? quantized->q : nullptr, quantized ? quantized->s : nullptr,
            1 };
        if (!quantized)
            if (const cudaError_t e
                = quantizeRows(x, xStride, tokens, cols, 1, scratch.data, q, stream))
                return e;
        bool done[kMaxFanOut] {};
        if (tokens == 1 && intMatVecLayout() == IntMatVecLayout::StagedWarpRow)
            if (const cudaError_t e
                = launchTwoTypes(outputs, count, integer, cols, q, stream, done))
                return e;
        for (int i = 0; i < count; ++i) {
            if (!integer[i] || done[i])
                continue;
            // Every later matrix of this type joins the launch, up to kMaxIntMatVecTargets.
            IntMatVecArgs args;
            args.targetCount = 0;
            for (int j = i; j < count && args.targetCount < kMaxIntMatVecTargets; ++j) {
                if (!integer[j] || done[j] || outputs[j].w->type != outputs[i].w->type)
                    continue;
                const DeviceMatrix& w = *outputs[j].w;
                args.targets[args.targetCount++] = { static_cast<const std::uint8_t*>(w.data),
                    w.rowStride, w.rows, outputs[j].y, outputs[j].yStride };
                done[j] = true;
            }
            args.cols = cols;
            args.x = q;
            args.tokens = tokens;
            args.stream = stream;
            cudaError_t result = cudaErrorInvalidValue;
            dispatchMatrixType(outputs[i].w->type, IntMatVecLaunch { args, result });
            if (result != cudaSuccess)
                return result;
        }
    }
    for (int i = 0; i < count; ++i) {
        if (integer[i])
            continue;
        if (const cudaError_t e = linear(*outputs[i].w, x, xStride, tokens, outputs[i].y,
                outputs[i].yStride, precision, scratch, cublas, stream))
            return e;
    }
    return cudaSuccess;
}

std::int64_t integerProductMaxTokens(const DeviceMatrix& w, GemmPrecision precision)
{
    if (!validMatrix(w))
        return 0;
    for (const std::int64_t tokens : { kIntMatMulMaxTokens, kMatVecMaxTokens })
        if (quant_detail::usesIntMatVec(w, tokens, precision))
            return tokens;
    return 0;
}

std::size_t linearScratchBytes(const DeviceMatrix& w, std::int64_t tokens, GemmPrecision precision)
{
    if (!validMatrix(w))
        return 0;
    // Every call up to `tokens` rows fits: the integer products' rows (<= kIntMatMulMaxTokens)
    // and, above, the prefill slabs.
    const std::size_t matVec = tokens >= 1
            && quant_detail::usesIntMatVec(w, std::min(tokens, kIntMatMulMaxTokens), precision)
        ? quant_detail::intMatVecScratchBytes(w, tokens)
        : 0;
    if (tokens <= kMatVecMaxTokens
        || (tokens <= kIntMatMulMaxTokens && quant_detail::usesIntMatVec(w, tokens, precision)))
        return matVec;
    const GemmPlan plan = planGemm(w, tokens, precision);
    return std::max(matVec, plan.xBytes + plan.slabBytes);
}

} // namespace cw::kernels::cuda
