// The weight products (kernels/cuda/quant/quant_products.h) against the CPU's quant::matMul
// on the same blocks: linear() of every weight type over token counts and row counts that
// cross each dispatch threshold (kMatVecMaxTokens 8, kIntMatMulMaxTokens 64, the tensor-core
// mat-vec's 4 tokens x 1024 rows x 2048 columns, the int8 tensor cores' 65,536 rows, the
// prefill's 64 MB slabs), the LM head at vocabularies that are not multiples of 64 or 128,
// linearFanOut (one quantization for several matrices, two-type launches), the embedding
// lookup and the dequantizers.
#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/dot.h"
#include "kernels/cpu/quant/quant_blocks.h"
#include "kernels/cuda/quant/quant_internal.h"
#include "kernels/cuda/quant/quant_products.h"
#include "tests/gpu/backend_ops/backend_ops.h"
#include "tests/gpu/quant/quant_test_support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace cw::backend_ops {
namespace {

using kernels::TensorType;
using kernels::cuda::DeviceMatrix;
using kernels::cuda::kIntMatMulMaxTokens;
using kernels::cuda::kMatVecMaxTokens;
namespace qd = kernels::cuda::quant_detail;

const char* typeName(TensorType type)
{
    return kernels::cuda::test::typeName(type);
}

std::int64_t blockSize(TensorType type)
{
    return kernels::tensorTypeTraits(std::uint32_t(type))->blockSize;
}

// One matrix on the host and the device, with the norms that set its products' scale. The
// table visits the cases of one matrix one after another, so one cached matrix suffices.
struct Matrix {
    TensorType type;
    std::int64_t rows = 0, cols = 0;
    std::size_t rowStride = 0;
    std::vector<std::uint8_t> host;
    DeviceBuffer device;
    DeviceMatrix w;
    double maxRowNorm = 0.0; // largest ||w_r|| of the dequantized rows
};

std::shared_ptr<Matrix> matrixOf(
    TensorType type, std::int64_t rows, std::int64_t cols, std::size_t pad = 0)
{
    static std::shared_ptr<Matrix> cached;
    if (cached && cached->type == type && cached->rows == rows && cached->cols == cols
        && cached->rowStride == kernels::cuda::test::bytesPerRow(type, cols) + pad)
        return cached;
    cached.reset();
    auto m = std::make_shared<Matrix>();
    m->type = type;
    m->rows = rows;
    m->cols = cols;
    m->rowStride = kernels::cuda::test::bytesPerRow(type, cols) + pad;
    std::mt19937 rng(std::uint32_t(rows * 7919 + cols * 31 + std::int64_t(type)));
    m->host = kernels::cuda::test::randomMatrix(type, rows, cols, m->rowStride, rng);
    m->device = DeviceBuffer::of(m->host);
    m->w = DeviceMatrix { type, m->device.get(), m->rowStride, rows, cols };
    std::vector<float> row(static_cast<std::size_t>(cols));
    for (std::int64_t r = 0; r < rows; ++r) {
        kernels::quant::dequantizeRow(
            type, m->host.data() + std::size_t(r) * m->rowStride, row.data(), cols);
        double n2 = 0.0;
        for (float v : row)
            n2 += double(v) * v;
        m->maxRowNorm = std::max(m->maxRowNorm, std::sqrt(n2));
    }
    cached = m;
    return m;
}

// Which products linear() runs for these rows (what the tolerance follows).
enum class Path { F32, Int8, Gemm };

Path pathOf(const DeviceMatrix& w, std::int64_t tokens, GemmPrecision precision)
{
    if (qd::usesIntMatVec(w, tokens, precision))
        return Path::Int8;
    return tokens <= kMatVecMaxTokens ? Path::F32 : Path::Gemm;
}

const char* pathName(Path path, GemmPrecision precision)
{
    switch (path) {
    case Path::F32:
        return "f32 mat-vec";
    case Path::Int8:
        return "int8 products";
    case Path::Gemm:
        return precision == GemmPrecision::Float32      ? "cuBLAS f32"
            : precision == GemmPrecision::TensorFloat32 ? "cuBLAS tf32"
                                                        : "cuBLAS bf16";
    }
    return "?";
}

// Bounds per path, as max|err| / max|want| (and ||err|| / ||want||), the error measured
// against at least ||w|| ||x|| / sqrt(cols), the typical size of one output:
//  - f32 (mat-vec kernels, cuBLAS pedantic): float rounding in another order, ~1e-6 (bound
//    1e-5 relative as tests/gpu/quant, 5e-5 on the worst value);
//  - tf32 operands (10-bit mantissas): ~1e-3, bound 1e-2;
//  - bf16 operands (8 bits): ~5e-3, bound 3e-2;
//  - int8 activations (one step of amax/127 per 32 values): 0.7e-2 to 2.9e-2 relative on the
//    H200 (tests/gpu/quant, 2026-12-01), bound 5e-2 relative and 1e-1 on the worst value.
Tolerance toleranceOf(Path path, GemmPrecision precision)
{
    if (path == Path::Int8)
        return { 1e-1, 5e-2 };
    if (path == Path::F32 || precision == GemmPrecision::Float32)
        return { 5e-5, 1e-5 };
    if (precision == GemmPrecision::TensorFloat32)
        return { 1e-2, 5e-3 };
    return { 3e-2, 1.5e-2 };
}

double maxRowNorm(const std::vector<float>& x, std::int64_t rows, std::int64_t cols)
{
    double worst = 0.0;
    for (std::int64_t t = 0; t < rows; ++t) {
        double n2 = 0.0;
        for (std::int64_t c = 0; c < cols; ++c)
            n2 += double(x[std::size_t(t * cols + c)]) * x[std::size_t(t * cols + c)];
        worst = std::max(worst, std::sqrt(n2));
    }
    return worst;
}

// linear() of `tokens` rows (x rows cols + 4 floats apart, y rows rows + 3 apart: strides are
// part of the contract) against quant::matMul.
void runLinear(CaseContext& ctx, TensorType type, std::int64_t rows, std::int64_t cols,
    std::int64_t tokens, GemmPrecision precision, std::size_t pad = 0)
{
    const auto m = matrixOf(type, rows, cols, pad);
    ASSERT_EQ(m->device.error(), cudaSuccess) << cudaGetErrorString(m->device.error());
    const DeviceMatrix& w = m->w;
    const Path path = pathOf(w, tokens, precision);
    ctx.note(pathName(path, precision));
    const std::int64_t xStride = cols + 4, yStride = rows + 3;
    const std::vector<float> xs = randomFloats(std::size_t(tokens * cols), ctx.rng());
    std::vector<float> xPadded(std::size_t(tokens * xStride), 7.0f);
    for (std::int64_t t = 0; t < tokens; ++t)
        std::copy_n(xs.begin() + t * cols, cols, xPadded.begin() + t * xStride);
    std::vector<float> want(std::size_t(tokens * rows));
    kernels::quant::matMul(
        type, m->host.data(), m->rowStride, rows, cols, xs.data(), tokens, want.data(), ctx.pool());

    auto dx = DeviceBuffer::of(xPadded);
    DeviceBuffer dy(std::size_t(tokens * yStride) * 4);
    const std::size_t scratchBytes = kernels::cuda::linearScratchBytes(w, tokens, precision);
    DeviceBuffer scratch(scratchBytes);
    BO_CUDA_OK(dx.error());
    BO_CUDA_OK(dy.error());
    BO_CUDA_OK(scratch.error());
    auto launch = [&](cudaStream_t s) {
        return kernels::cuda::linear(w, dx.get<float>(), xStride, tokens, dy.get<float>(), yStride,
            precision, scratch.scratch(), ctx.cublas(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> y, got(want.size());
    BO_CUDA_OK(dy.download(y));
    for (std::int64_t t = 0; t < tokens; ++t)
        std::copy_n(y.begin() + t * yStride, rows, got.begin() + t * rows);
    const double floor = m->maxRowNorm * maxRowNorm(xs, tokens, cols) / std::sqrt(double(cols));
    ctx.check("y", got, want, toleranceOf(path, precision), rowsOf(rows, "token", "row"), floor);
    // Bytes a product must move: the weights once, x and y.
    ctx.measure(
        double(m->rowStride) * double(rows) + 4.0 * double(tokens) * double(cols + rows), launch);
}

// The forced kernel families (quant_internal.h's setMatVecKernel): each must be exact on its
// own, not only where the dispatch picks it.
void runForcedMatVec(CaseContext& ctx, TensorType type, std::int64_t rows, std::int64_t cols,
    std::int64_t tokens, qd::MatVecKernel kernel)
{
    struct Restore {
        ~Restore() { qd::setMatVecKernel(qd::MatVecKernel::Auto); }
    } restore;
    qd::setMatVecKernel(kernel);
    runLinear(ctx, type, rows, cols, tokens,
        kernel == qd::MatVecKernel::Int8 ? GemmPrecision::BFloat16 : GemmPrecision::Float32);
}

// One token row under each layout of the integer products (mat_vec.h's IntMatVecLayout: a
// block per row, a warp per one or two rows, rows staged in shared memory), on rows 16-byte
// aligned and rows `pad` bytes past their blocks.
void runIntLayout(CaseContext& ctx, TensorType type, std::int64_t rows, std::int64_t cols,
    qd::IntMatVecLayout layout, std::size_t pad)
{
    const qd::IntMatVecLayout before = qd::intMatVecLayout();
    struct Restore {
        qd::IntMatVecLayout layout;
        ~Restore()
        {
            qd::setIntMatVecLayout(layout);
            qd::setMatVecKernel(qd::MatVecKernel::Auto);
        }
    } restore { before };
    qd::setMatVecKernel(qd::MatVecKernel::Int8);
    qd::setIntMatVecLayout(layout);
    runLinear(ctx, type, rows, cols, 1, GemmPrecision::BFloat16, pad);
}

// Every matrix to the int8 tensor cores at 9..64 rows (CW_CUDA_INTMM=1's setting).
void runIntMatMulForAll(
    CaseContext& ctx, TensorType type, std::int64_t rows, std::int64_t cols, std::int64_t tokens)
{
    struct Restore {
        ~Restore() { qd::setIntMatMulForAll(false); }
    } restore;
    qd::setIntMatMulForAll(true);
    runLinear(ctx, type, rows, cols, tokens, GemmPrecision::BFloat16);
}

// linearFanOut over matrices of `types` (same columns) against one matMul each.
void runFanOut(CaseContext& ctx, const std::vector<TensorType>& types, std::int64_t cols,
    std::int64_t tokens, GemmPrecision precision)
{
    const int count = int(types.size());
    std::vector<std::vector<std::uint8_t>> hosts(static_cast<std::size_t>(count));
    std::vector<DeviceBuffer> buffers;
    std::vector<DeviceMatrix> ws(static_cast<std::size_t>(count));
    std::vector<std::int64_t> rows(static_cast<std::size_t>(count));
    std::size_t scratchBytes = 0;
    double maxNorm = 0.0;
    for (int i = 0; i < count; ++i) {
        rows[std::size_t(i)] = 97 + 53 * i; // odd, different per output
        const std::size_t stride = kernels::cuda::test::bytesPerRow(types[std::size_t(i)], cols);
        hosts[std::size_t(i)] = kernels::cuda::test::randomMatrix(
            types[std::size_t(i)], rows[std::size_t(i)], cols, stride, ctx.rng());
        buffers.push_back(DeviceBuffer::of(hosts[std::size_t(i)]));
        BO_CUDA_OK(buffers.back().error());
        ws[std::size_t(i)]
            = { types[std::size_t(i)], buffers.back().get(), stride, rows[std::size_t(i)], cols };
        scratchBytes = std::max(
            scratchBytes, kernels::cuda::linearScratchBytes(ws[std::size_t(i)], tokens, precision));
        std::vector<float> row(static_cast<std::size_t>(cols));
        for (std::int64_t r = 0; r < rows[std::size_t(i)]; ++r) {
            kernels::quant::dequantizeRow(types[std::size_t(i)],
                hosts[std::size_t(i)].data() + std::size_t(r) * stride, row.data(), cols);
            maxNorm = std::max(maxNorm, maxRowNorm(row, 1, cols));
        }
    }
    const std::vector<float> xs = randomFloats(std::size_t(tokens * cols), ctx.rng());
    auto dx = DeviceBuffer::of(xs);
    std::int64_t total = 0;
    for (std::int64_t r : rows)
        total += r;
    DeviceBuffer dy(std::size_t(total * tokens) * 4);
    DeviceBuffer scratch(scratchBytes);
    BO_CUDA_OK(dx.error());
    BO_CUDA_OK(dy.error());
    BO_CUDA_OK(scratch.error());
    std::vector<kernels::cuda::LinearOutput> outputs(static_cast<std::size_t>(count));
    std::int64_t offset = 0;
    for (int i = 0; i < count; ++i) {
        outputs[std::size_t(i)]
            = { &ws[std::size_t(i)], dy.get<float>() + offset * tokens, rows[std::size_t(i)] };
        offset += rows[std::size_t(i)];
    }
    auto launch = [&](cudaStream_t s) {
        return kernels::cuda::linearFanOut(outputs.data(), count, dx.get<float>(), cols, tokens,
            nullptr, precision, scratch.scratch(), ctx.cublas(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> y;
    BO_CUDA_OK(dy.download(y));
    const double floor = maxNorm * maxRowNorm(xs, tokens, cols) / std::sqrt(double(cols));
    offset = 0;
    double bytes = 4.0 * double(tokens) * double(cols + total);
    for (int i = 0; i < count; ++i) {
        const std::int64_t n = rows[std::size_t(i)];
        std::vector<float> want(std::size_t(tokens * n));
        kernels::quant::matMul(types[std::size_t(i)], hosts[std::size_t(i)].data(),
            ws[std::size_t(i)].rowStride, n, cols, xs.data(), tokens, want.data(), ctx.pool());
        std::vector<float> got(y.begin() + offset * tokens, y.begin() + (offset + n) * tokens);
        const Path path = pathOf(ws[std::size_t(i)], tokens, precision);
        std::string output = "y";
        output += std::to_string(i);
        output += " (";
        output += typeName(types[std::size_t(i)]);
        output += ")";
        ctx.check(
            output, got, want, toleranceOf(path, precision), rowsOf(n, "token", "row"), floor);
        offset += n;
        bytes += double(ws[std::size_t(i)].rowStride) * double(n);
    }
    ctx.measure(bytes, launch);
}

// The embedding lookup: rows bit for bit as the CPU dequantizes them.
void runGatherRows(CaseContext& ctx, TensorType type, std::int64_t vocab, std::int64_t cols)
{
    const auto m = matrixOf(type, vocab, cols);
    BO_CUDA_OK(m->device.error());
    std::vector<std::int32_t> ids { 0, std::int32_t(vocab - 1), 1, std::int32_t(vocab / 2), 0 };
    std::uniform_int_distribution<std::int32_t> pick(0, std::int32_t(vocab - 1));
    for (int i = 0; i < 60; ++i)
        ids.push_back(pick(ctx.rng()));
    auto dIds = DeviceBuffer::of(ids);
    DeviceBuffer out(ids.size() * std::size_t(cols) * 4);
    BO_CUDA_OK(dIds.error());
    BO_CUDA_OK(out.error());
    auto launch = [&](cudaStream_t s) {
        return kernels::cuda::gatherRows(
            m->w, dIds.get<std::int32_t>(), std::int64_t(ids.size()), out.get<float>(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got, want(ids.size() * std::size_t(cols));
    BO_CUDA_OK(out.download(got));
    for (std::size_t i = 0; i < ids.size(); ++i)
        kernels::quant::dequantizeRow(type, m->host.data() + std::size_t(ids[i]) * m->rowStride,
            want.data() + i * std::size_t(cols), cols);
    ctx.check("rows", got, want, { 0.0, 0.0 }, rowsOf(cols, "id #", "col"));
    ctx.measure(double(ids.size()) * double(m->rowStride + 4 * std::size_t(cols)), launch);
}

// dequantizeToF32 and dequantizeToBf16 bit for bit against the CPU (and the bf16 of its
// values), and the mat-vec kernels' chunk decoders (quant_internal.h) for block types.
void runDequantize(CaseContext& ctx, TensorType type, std::int64_t rows, std::int64_t cols)
{
    const auto m = matrixOf(type, rows, cols);
    BO_CUDA_OK(m->device.error());
    const std::size_t n = std::size_t(rows * cols);
    std::vector<float> want(n);
    for (std::int64_t r = 0; r < rows; ++r)
        kernels::quant::dequantizeRow(
            type, m->host.data() + std::size_t(r) * m->rowStride, want.data() + r * cols, cols);
    DeviceBuffer f32(n * 4), bf16(n * 2);
    BO_CUDA_OK(f32.error());
    BO_CUDA_OK(bf16.error());
    BO_CUDA_OK(kernels::cuda::dequantizeToF32(m->w, f32.get<float>(), ctx.stream()));
    BO_CUDA_OK(kernels::cuda::dequantizeToBf16(m->w, bf16.get<std::uint16_t>(), ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got;
    std::vector<std::uint16_t> got16;
    BO_CUDA_OK(f32.download(got));
    BO_CUDA_OK(bf16.download(got16));
    ctx.check("f32", got, want, { 0.0, 0.0 }, rowsOf(cols, "row", "col"));
    std::vector<float> got16f(n), want16f(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t a = std::uint32_t(got16[i]) << 16;
        const std::uint32_t b = std::uint32_t(kernels::quant::fp32ToBf16(want[i])) << 16;
        std::memcpy(&got16f[i], &a, 4);
        std::memcpy(&want16f[i], &b, 4);
    }
    ctx.check("bf16", got16f, want16f, { 0.0, 0.0 }, rowsOf(cols, "row", "col"));
    if (blockSize(type) >= 32) {
        BO_CUDA_OK(f32.poison());
        BO_CUDA_OK(qd::dequantizeChunksToF32(m->w, f32.get<float>(), ctx.stream()));
        BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
        BO_CUDA_OK(f32.download(got));
        ctx.check("chunk decoders", got, want, { 0.0, 0.0 }, rowsOf(cols, "row", "col"));
    }
    ctx.measure(double(m->rowStride) * double(rows) + 4.0 * double(n),
        [&](cudaStream_t s) { return kernels::cuda::dequantizeToF32(m->w, f32.get<float>(), s); });
}

std::string shapeText(TensorType type, std::int64_t rows, std::int64_t cols, std::int64_t tokens,
    GemmPrecision precision)
{
    return std::string(typeName(type)) + " rows " + std::to_string(rows) + " cols "
        + std::to_string(cols) + " tokens " + std::to_string(tokens) + " "
        + precisionName(precision);
}

// Column counts for a type: whole blocks, the smallest first.
std::vector<std::int64_t> columnsFor(TensorType type)
{
    if (blockSize(type) == 256)
        return { 256, 768, 2048, 4608 };
    if (blockSize(type) == 32)
        return { 96, 256, 2048, 4608 };
    return { 64, 1001, 2048, 4608 };
}

const std::vector<TensorType> kModelTypes { TensorType::F32, TensorType::F16, TensorType::BF16,
    TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K };
const std::vector<TensorType> kOtherTypes { TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
    TensorType::Q5_1, TensorType::Q2_K, TensorType::Q3_K, TensorType::IQ4_XS };

} // namespace

void addLinearCases(CaseTable& table)
{
    const GemmPrecision f32 = GemmPrecision::Float32, tf32 = GemmPrecision::TensorFloat32,
                        bf16 = GemmPrecision::BFloat16;
    std::vector<TensorType> types = kModelTypes;
    types.insert(types.end(), kOtherTypes.begin(), kOtherTypes.end());
    for (const TensorType type : types) {
        const bool modelType
            = std::find(kModelTypes.begin(), kModelTypes.end(), type) != kModelTypes.end();
        const auto cols = columnsFor(type);
        // Rows: 1; 8/9 and 64/65 (the kernels' row groups of 2 and 4 and the tiles of 16 and
        // 64); 127 (prime); 1000, 1023/1024 x 2048 (the tensor-core mat-vec's 1024 x 2048 from
        // 4 tokens); 1921 (a vocabulary past 1,920); 4097 and 5000.
        const std::vector<std::pair<std::int64_t, std::int64_t>> matrices { { 1, cols[0] },
            { 8, cols[1] }, { 9, cols[0] }, { 64, cols[2] }, { 65, cols[0] }, { 127, cols[1] },
            { 1000, cols[1] }, { 1023, 2048 }, { 1024, 2048 }, { 1921, cols[0] }, { 4097, cols[1] },
            { 5000, cols[3] } };
        // Tokens: 1, 2-3 (one kernel shape), 4 (the tensor-core mat-vec), 8/9
        // (kMatVecMaxTokens), 33, 64/65 (kIntMatMulMaxTokens), 647 (a prompt chunk).
        const std::vector<std::int64_t> tokenCounts { 1, 2, 3, 4, 8, 9, 33, 64, 65, 647 };
        for (const auto& [rows, c] : matrices) {
            for (const std::int64_t tokens : tokenCounts) {
                if (double(rows) * double(c) * double(tokens) > 2e9)
                    continue; // the CPU reference would dominate the run
                for (const GemmPrecision p : { f32, tf32, bf16 }) {
                    // tf32 differs from bf16 only on cuBLAS (above kMatVecMaxTokens).
                    if (p == tf32 && tokens <= kMatVecMaxTokens)
                        continue;
                    const bool quick = modelType
                        && ((rows == 1921 && (tokens == 1 || tokens == 9 || tokens == 65))
                            || (rows == 1024 && tokens == 4 && p != tf32)
                            || (rows == 9 && tokens == 647 && p == bf16));
                    table.add("linear", shapeText(type, rows, c, tokens, p), quick,
                        [type, rows, c, tokens, p](
                            CaseContext& ctx) { runLinear(ctx, type, rows, c, tokens, p); });
                }
            }
        }
        // Rows apart by more than their blocks (16 pad bytes).
        for (const std::int64_t tokens : { 1, 5, 71 })
            for (const GemmPrecision p : { f32, bf16 })
                table.add("linear",
                    shapeText(type, 37, cols[1], tokens, p) + " rows padded by 16 bytes", false,
                    [type, c = cols[1], tokens, p](
                        CaseContext& ctx) { runLinear(ctx, type, 37, c, tokens, p, 16); });
        // The LM head: vocabularies of 1,000, 1,921 and 151,936 rows, 65,535 and 65,536 (the
        // int8 tensor cores' threshold at 9..64 tokens); 151,936 rows at 65 tokens take the
        // prefill in several 64 MB slabs (2 in bf16, 3 in f32).
        for (const std::int64_t vocab : { 1000, 1921, 65535, 65536, 151936 })
            for (const std::int64_t tokens : { 1, 8, 9, 64, 65 })
                for (const GemmPrecision p : { f32, bf16 }) {
                    const bool quick = modelType && vocab == 151936 && p == bf16
                        && (tokens == 1 || tokens == 9)
                        && (type == TensorType::Q8_0 || type == TensorType::Q6_K
                            || type == TensorType::BF16);
                    if (!modelType && vocab != 151936)
                        continue;
                    table.add("linear (LM head)", shapeText(type, vocab, cols[0], tokens, p), quick,
                        [type, vocab, c = cols[0], tokens, p](
                            CaseContext& ctx) { runLinear(ctx, type, vocab, c, tokens, p); });
                }
        // The kernel families forced, on the rows each was written for.
        for (const std::int64_t tokens : { 1, 3, 4, 8 }) {
            table.add("matVec (simt forced)", shapeText(type, 1100, 2048, tokens, f32), false,
                [type, tokens](CaseContext& ctx) {
                    runForcedMatVec(ctx, type, 1100, 2048, tokens, qd::MatVecKernel::Simt);
                });
            table.add("matVec (mma forced)", shapeText(type, 1100, 2048, tokens, f32), false,
                [type, tokens](CaseContext& ctx) {
                    runForcedMatVec(ctx, type, 1100, 2048, tokens, qd::MatVecKernel::Mma);
                });
            if (blockSize(type) > 1)
                table.add("intMatVec (int8 forced)", shapeText(type, 1100, 2048, tokens, bf16),
                    modelType && tokens == 1, [type, tokens](CaseContext& ctx) {
                        runForcedMatVec(ctx, type, 1100, 2048, tokens, qd::MatVecKernel::Int8);
                    });
        }
        if (blockSize(type) > 1)
            for (const auto& [layout, name] :
                { std::pair { qd::IntMatVecLayout::BlockRow, "block per row" },
                    std::pair { qd::IntMatVecLayout::WarpRow, "warp per row" },
                    std::pair { qd::IntMatVecLayout::WarpTwoRows, "warp per two rows" },
                    std::pair { qd::IntMatVecLayout::StagedWarpRow, "staged warp rows" } })
                for (const auto& [rows, c, pad] : { std::tuple { 1100, 2048, 0 },
                         std::tuple { 67, int(cols[3]), 0 }, std::tuple { 37, int(cols[1]), 2 } })
                    table.add(std::string("intMatVec (") + name + ")",
                        shapeText(type, rows, c, 1, bf16)
                            + (pad ? " rows padded by " + std::to_string(pad) + " bytes" : ""),
                        modelType && rows == 1100 && type == TensorType::Q4_K,
                        [type, rows, c, layout, pad](CaseContext& ctx) {
                            runIntLayout(ctx, type, rows, c, layout, std::size_t(pad));
                        });
        if (blockSize(type) > 1 && type != TensorType::Q2_K)
            for (const std::int64_t tokens : { 9, 16, 17, 33, 64 })
                table.add("intMatMul (all rows)", shapeText(type, 67, cols[2], tokens, bf16),
                    modelType && tokens == 17, [type, c = cols[2], tokens](CaseContext& ctx) {
                        runIntMatMulForAll(ctx, type, 67, c, tokens);
                    });
        table.add("gatherRows (embedding)",
            std::string(typeName(type)) + " vocab 1921 cols " + std::to_string(cols[0]), modelType,
            [type, c = cols[0]](CaseContext& ctx) { runGatherRows(ctx, type, 1921, c); });
        table.add("dequantize",
            std::string(typeName(type)) + " rows 65 cols " + std::to_string(cols[1]), modelType,
            [type, c = cols[1]](CaseContext& ctx) { runDequantize(ctx, type, 65, c); });
    }
    // Fan-outs: one type (one launch for up to four matrices), the K-quant mixes (two types in
    // one launch at one token), eight outputs (kMaxFanOut), at 1, 3, 9 and 65 tokens.
    const std::vector<std::vector<TensorType>> fans { { TensorType::Q4_K, TensorType::Q4_K },
        { TensorType::Q4_K, TensorType::Q6_K, TensorType::Q4_K },
        { TensorType::Q5_K, TensorType::Q6_K },
        { TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0,
            TensorType::Q8_0 },
        { TensorType::Q6_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::Q4_K,
            TensorType::Q5_K, TensorType::Q6_K, TensorType::Q4_K },
        { TensorType::F32, TensorType::BF16, TensorType::Q8_0 } };
    for (const auto& fan : fans) {
        std::string name;
        for (const TensorType t : fan) {
            if (!name.empty())
                name += "+";
            name += typeName(t);
        }
        for (const std::int64_t tokens : { 1, 3, 9, 65 })
            for (const GemmPrecision p : { f32, bf16 })
                table.add("linearFanOut",
                    name + " cols 2048 tokens " + std::to_string(tokens) + " " + precisionName(p),
                    tokens == 1 && p == bf16,
                    [fan, tokens, p](CaseContext& ctx) { runFanOut(ctx, fan, 2048, tokens, p); });
    }
}

} // namespace cw::backend_ops
