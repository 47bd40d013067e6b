// The row kernels (kernels/cuda/ops/row_ops.h) against ops::rmsNorm and plain host loops: the
// norms (with strides, in place, the residual add, the shared expert's gated addend, the int8
// rows the fused quantization writes), the row gather, the non-finite count and the greedy
// argmax over vocabularies of 1,000, 1,921, 8,192/8,193 (its chunk) and 151,936 values at 1..64
// rows, ties to the lowest index; the token draws (sampling on the device) over the same
// vocabularies against ops::drawToken.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/token_draw.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/ops/row_ops.h"
#include "kernels/cuda/ops/token_draw.h"
#include "kernels/cuda/quant/mat_vec.h"
#include "tests/gpu/backend_ops/backend_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace cw::backend_ops {
namespace {

namespace kc = kernels::cuda;

// rmsNormRows with x and out strides, optional weight, optionally in place.
void runRmsNorm(CaseContext& ctx, std::int64_t rows, std::int64_t n, bool weighted, bool inPlace)
{
    const std::int64_t xStride = n + 8, outStride = inPlace ? xStride : n + 2;
    const float eps = 1e-6f;
    const auto x = uniformFloats(std::size_t(rows * xStride), ctx.rng(), -2, 2);
    const auto w = uniformFloats(std::size_t(n), ctx.rng(), 0.5f, 1.5f);
    auto dX = DeviceBuffer::of(x);
    auto dW = DeviceBuffer::of(w);
    DeviceBuffer dOut(std::size_t(rows * outStride) * 4);
    BO_CUDA_OK(dX.error());
    BO_CUDA_OK(dOut.error());
    float* out = inPlace ? dX.get<float>() : dOut.get<float>();
    BO_CUDA_OK(kc::rmsNormRows(dX.get<float>(), xStride, weighted ? dW.get<float>() : nullptr, rows,
        n, eps, out, outStride, ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> all;
    BO_CUDA_OK((inPlace ? dX : dOut).download(all));
    std::vector<float> got(std::size_t(rows * n)), want(got.size());
    for (std::int64_t r = 0; r < rows; ++r) {
        kernels::ops::rmsNorm(
            x.data() + r * xStride, weighted ? w.data() : nullptr, n, eps, want.data() + r * n);
        std::copy_n(all.begin() + r * outStride, n, got.begin() + r * n);
    }
    ctx.check("out", got, want, { 1e-5, 1e-6 }, rowsOf(n, "row", "col"));
    if (inPlace) { // values past n untouched
        std::vector<float> tailGot, tailWant;
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t i = n; i < xStride; ++i) {
                tailGot.push_back(all[std::size_t(r * xStride + i)]);
                tailWant.push_back(x[std::size_t(r * xStride + i)]);
            }
        ctx.check("row padding (unchanged)", tailGot, tailWant, { 0.0, 0.0 });
    }
    ctx.measure(8.0 * double(rows * n), [&](cudaStream_t s) {
        return kc::rmsNormRows(dX.get<float>(), xStride, weighted ? dW.get<float>() : nullptr, rows,
            n, eps, dOut.get<float>(), n + 2, s);
    });
}

// addRmsNormRows (and its quantizing form): hidden += delta (+ the shared expert's gated
// addend), normed = rmsNorm(hidden) * w; the int8 rows within half a quantization step of the
// normed values, their block sums those of the normed rows.
void runAddRmsNorm(CaseContext& ctx, std::int64_t rows, std::int64_t n, bool withDelta,
    bool withAddend, bool quantized)
{
    if (quantized && !kc::addRmsNormQuantizes(n)) {
        ctx.skip("addRmsNormQuantizes(" + std::to_string(n) + ") is false");
        return;
    }
    const float eps = 1e-6f;
    const auto hidden = uniformFloats(std::size_t(rows * n), ctx.rng(), -2, 2);
    const auto delta = uniformFloats(std::size_t(rows * n), ctx.rng(), -2, 2);
    const auto x = uniformFloats(std::size_t(rows * n), ctx.rng(), -2, 2);
    const auto down = uniformFloats(std::size_t(rows * n), ctx.rng(), -2, 2);
    const auto gateWeight = uniformFloats(std::size_t(n), ctx.rng(), -0.05f, 0.05f);
    const auto w = uniformFloats(std::size_t(n), ctx.rng(), 0.5f, 1.5f);
    auto dHidden = DeviceBuffer::of(hidden);
    auto dDelta = DeviceBuffer::of(delta);
    auto dX = DeviceBuffer::of(x);
    auto dDown = DeviceBuffer::of(down);
    auto dGate = DeviceBuffer::of(gateWeight);
    auto dW = DeviceBuffer::of(w);
    DeviceBuffer dNormed(std::size_t(rows * n) * 4), dQ(std::size_t(rows * n)),
        dS(std::size_t(rows * n / 32) * 16);
    BO_CUDA_OK(dHidden.error());
    BO_CUDA_OK(dNormed.error());
    kc::GatedAddend addend;
    if (withAddend)
        addend = { dX.get<float>(), dGate.get<float>(), dDown.get<float>() };
    const float* pDelta = withDelta ? dDelta.get<float>() : nullptr;
    const kc::Int8Rows q8 { dQ.get<std::int8_t>(), dS.get<float4>() };
    if (quantized)
        BO_CUDA_OK(kc::addRmsNormRowsQuantized(dHidden.get<float>(), pDelta, dW.get<float>(), rows,
            n, eps, dNormed.get<float>(), q8, ctx.stream(), addend));
    else
        BO_CUDA_OK(kc::addRmsNormRows(dHidden.get<float>(), pDelta, dW.get<float>(), rows, n, eps,
            dNormed.get<float>(), ctx.stream(), addend));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> gotHidden, gotNormed;
    BO_CUDA_OK(dHidden.download(gotHidden));
    BO_CUDA_OK(dNormed.download(gotNormed));
    std::vector<float> wantHidden = hidden, wantNormed(hidden.size());
    for (std::int64_t r = 0; r < rows; ++r) {
        float gate = 0.0f;
        if (withAddend) {
            float dot = 0.0f;
            for (std::int64_t c = 0; c < n; ++c)
                dot += gateWeight[std::size_t(c)] * x[std::size_t(r * n + c)];
            gate = kernels::ops::sigmoid(dot);
        }
        for (std::int64_t c = 0; c < n; ++c) {
            const std::size_t i = std::size_t(r * n + c);
            float d = withDelta ? delta[i] : 0.0f;
            if (withAddend)
                d += gate * down[i];
            wantHidden[i] += d;
        }
        kernels::ops::rmsNorm(
            wantHidden.data() + r * n, w.data(), n, eps, wantNormed.data() + r * n);
    }
    // The gated addend's gate is a dot product over n summed in another order on the device
    // (a tree, not the loop above): its rounding reaches every element of the row, so the
    // whole-row L2 bound is that of one rounding of the gate (H200, n 1,001-4,096: up to 5e-7
    // largest and above 1e-7 L2 against this loop).
    ctx.check("hidden", gotHidden, wantHidden,
        withAddend ? Tolerance { 2e-6, 1e-6 } : Tolerance { 1e-6, 1e-7 }, rowsOf(n, "row", "col"));
    ctx.check("normed", gotNormed, wantNormed, { 1e-5, 1e-6 }, rowsOf(n, "row", "col"));
    if (quantized) {
        std::vector<std::int8_t> q;
        std::vector<float> s;
        BO_CUDA_OK(dQ.download(q));
        BO_CUDA_OK(dS.download(s));
        // Per 32 values: d = amax / 127 of the normed values the launch wrote; each value
        // within half a step of d * q; the block sum that of the f32 values.
        std::vector<float> steps(q.size()), zeros(q.size(), 0.0f), sums, wantSums;
        for (std::size_t b = 0; b < q.size() / 32; ++b) {
            const float d = s[b * 4];
            float amax = 0.0f, sum = 0.0f;
            for (std::size_t i = 0; i < 32; ++i) {
                amax = std::max(amax, std::fabs(gotNormed[b * 32 + i]));
                sum += gotNormed[b * 32 + i];
            }
            const float unit = amax / 127.0f;
            for (std::size_t i = 0; i < 32; ++i) {
                const float e = std::fabs(d * float(q[b * 32 + i]) - gotNormed[b * 32 + i]);
                steps[b * 32 + i] = unit > 0 ? e / unit : e;
            }
            sums.push_back(s[b * 4 + 2]);
            wantSums.push_back(sum);
        }
        // At most half a step from rounding, plus float rounding of d.
        ctx.check("int8 rows (error in quantization steps)", steps, zeros, { 0.51, 0.0 },
            rowsOf(n, "row", "col"));
        ctx.check("int8 block sums", sums, wantSums, { 1e-5, 0.0 }, rowsOf(n / 32, "row", "block"));
    }
    ctx.measure(4.0 * double(rows * n) * (quantized ? 3.5 : 3.0), [&](cudaStream_t st) {
        return quantized ? kc::addRmsNormRowsQuantized(dHidden.get<float>(), pDelta,
                   dW.get<float>(), rows, n, eps, dNormed.get<float>(), q8, st, addend)
                         : kc::addRmsNormRows(dHidden.get<float>(), pDelta, dW.get<float>(), rows,
                             n, eps, dNormed.get<float>(), st, addend);
    });
}

void runGatherF32Rows(CaseContext& ctx, std::int64_t sourceRows, std::int64_t n, std::int64_t count)
{
    const auto x = randomFloats(std::size_t(sourceRows * n), ctx.rng());
    std::vector<std::int32_t> rows;
    std::uniform_int_distribution<std::int32_t> pick(0, std::int32_t(sourceRows - 1));
    for (std::int64_t i = 0; i < count; ++i)
        rows.push_back(i == 0 ? std::int32_t(sourceRows - 1) : pick(ctx.rng()));
    auto dX = DeviceBuffer::of(x);
    auto dRows = DeviceBuffer::of(rows);
    DeviceBuffer dOut(std::size_t(count * n) * 4);
    BO_CUDA_OK(dOut.error());
    BO_CUDA_OK(kc::gatherF32Rows(
        dX.get<float>(), dRows.get<std::int32_t>(), count, n, dOut.get<float>(), ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<float> got, want;
    BO_CUDA_OK(dOut.download(got));
    for (const std::int32_t r : rows)
        want.insert(want.end(), x.begin() + r * n, x.begin() + (r + 1) * n);
    ctx.check("out", got, want, { 0.0, 0.0 }, rowsOf(n, "row", "col"));
    ctx.measure(8.0 * double(count * n), [&](cudaStream_t s) {
        return kc::gatherF32Rows(
            dX.get<float>(), dRows.get<std::int32_t>(), count, n, dOut.get<float>(), s);
    });
}

void runCountNonFinite(CaseContext& ctx, std::int64_t n)
{
    auto x = randomFloats(std::size_t(n), ctx.rng());
    std::int32_t want = 0;
    for (const std::int64_t at : { std::int64_t(0), n / 3, n - 1 }) {
        x[std::size_t(at)] = at == 0 ? std::numeric_limits<float>::quiet_NaN()
                                     : (at == n - 1 ? -INFINITY : INFINITY);
        ++want;
    }
    if (n < 3)
        want = std::int32_t(
            std::count_if(x.begin(), x.end(), [](float v) { return !std::isfinite(v); }));
    auto dX = DeviceBuffer::of(x);
    DeviceBuffer dCount(4);
    BO_CUDA_OK(cudaMemset(dCount.get(), 0, 4));
    BO_CUDA_OK(kc::countNonFinite(dX.get<float>(), n, dCount.get<int>(), ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<std::int32_t> got;
    BO_CUDA_OK(dCount.download(got));
    ctx.checkExact("count", got, { want });
    ctx.measure(4.0 * double(n), [&](cudaStream_t s) {
        return kc::countNonFinite(dX.get<float>(), n, dCount.get<int>(), s);
    });
}

// argmaxRows: the index of each row's largest value (the lowest among equals) and the value.
void runArgmax(CaseContext& ctx, std::int64_t rows, std::int64_t n, bool ties)
{
    auto x = randomFloats(std::size_t(rows * n), ctx.rng(), 3.0f);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (std::int64_t r = 0; r < rows && ties; ++r) {
        // The maximum twice or three times in one row, in different chunks where n allows.
        const float top = 100.0f + float(r);
        const std::int64_t a = pick(ctx.rng()), b = pick(ctx.rng()), c = n - 1;
        x[std::size_t(r * n + a)] = top;
        x[std::size_t(r * n + b)] = top;
        x[std::size_t(r * n + c)] = top;
    }
    std::vector<std::int32_t> wantIndex(static_cast<std::size_t>(rows));
    std::vector<float> wantValue(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * n;
        const std::int64_t i = std::max_element(row, row + n) - row; // first of the largest
        wantIndex[std::size_t(r)] = std::int32_t(i);
        wantValue[std::size_t(r)] = row[i];
    }
    auto dX = DeviceBuffer::of(x);
    DeviceBuffer dIndex(std::size_t(rows) * 4), dValue(std::size_t(rows) * 4);
    auto workspace
        = DeviceBuffer::of(std::vector<std::uint8_t>(kc::argmaxWorkspaceBytes(rows, n), 0));
    BO_CUDA_OK(workspace.error());
    auto launch = [&](cudaStream_t s) {
        return kc::argmaxRows(dX.get<float>(), rows, n, dIndex.get<std::int32_t>(),
            dValue.get<float>(), workspace.get(), s);
    };
    // Twice: every call must leave the workspace zero for the next.
    for (int call = 0; call < 2; ++call) {
        BO_CUDA_OK(dIndex.poison());
        BO_CUDA_OK(launch(ctx.stream()));
        BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
        std::vector<std::int32_t> gotIndex;
        std::vector<float> gotValue;
        BO_CUDA_OK(dIndex.download(gotIndex));
        BO_CUDA_OK(dValue.download(gotValue));
        const std::string c = call ? " (second call)" : "";
        ctx.checkExact("index" + c, gotIndex, wantIndex, rowsOf(1, "row", "-"));
        ctx.check("value" + c, gotValue, wantValue, { 0.0, 0.0 }, rowsOf(1, "row", "-"));
    }
    ctx.measure(4.0 * double(rows * n), launch);
}

// drawTokens: the token each row's draw picks, against ops::TokenCuts on the same logits and
// uniforms. The device sums weights in float where the host sums in double, so over a large
// vocabulary a uniform near a boundary may pick a neighbour: each pick must be a token the
// host's cuts keep, and the uniform must fall in that token's share of the mass (in id order)
// to within float summation. Greedy rows keep what was there.
enum class Cut { Temperature, TopK, TopP, TopKTopPMinP, Mixed };

void runDrawTokens(CaseContext& ctx, std::int64_t rows, std::int64_t n, Cut cut)
{
    auto x = randomFloats(std::size_t(rows * n), ctx.rng(), 3.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<kernels::TokenDraw> draws(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        kernels::TokenDraw& d = draws[std::size_t(r)];
        d.temperature = 0.5f + unit(ctx.rng());
        d.u = std::min(unit(ctx.rng()), 0.99999994f);
        const Cut c = cut == Cut::Mixed ? Cut(r % 4) : cut;
        if (c == Cut::TopK || c == Cut::TopKTopPMinP)
            d.topK = 1 + int(r * 7 % 64);
        if (c == Cut::TopP || c == Cut::TopKTopPMinP)
            d.topP = 0.5f + 0.45f * unit(ctx.rng());
        if (c == Cut::TopKTopPMinP)
            d.minP = 0.02f;
        if (cut == Cut::Mixed && r % 5 == 4)
            d.temperature = 0.0f; // greedy: the kernel leaves the row's id alone
        if (cut == Cut::Mixed && r % 7 == 6) // -inf and NaN are never drawn
            for (std::int64_t i = 0; i < n; i += 3)
                x[std::size_t(r * n + i)] = i % 2 ? -INFINITY : NAN;
    }
    std::vector<std::int32_t> before(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
        before[std::size_t(r)] = std::int32_t(r + 1000000);
    auto dX = DeviceBuffer::of(x);
    auto dDraws = DeviceBuffer::of(draws);
    auto dIds = DeviceBuffer::of(before);
    BO_CUDA_OK(dIds.error());
    auto launch = [&](cudaStream_t s) {
        return kc::drawTokens(dX.get<float>(), rows, n, dDraws.get<kernels::TokenDraw>(),
            dIds.get<std::int32_t>(), s);
    };
    BO_CUDA_OK(launch(ctx.stream()));
    BO_CUDA_OK(cudaStreamSynchronize(ctx.stream()));
    std::vector<std::int32_t> got;
    BO_CUDA_OK(dIds.download(got));
    // Float sums over n weights in the kernel's chunked scan: well within 1e-5 of the mass
    // at 248,320 tokens, where one token's share is about 1e-5 in the flat part.
    const double slack = 1e-5;
    int exact = 0;
    // One verdict per row (1: the pick is acceptable), compared with all ones, so that the
    // table counts the rows it checked and names the first bad one with its reason.
    std::vector<std::int32_t> verdicts(static_cast<std::size_t>(rows), 1);
    std::vector<std::string> reasons(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto& draw = draws[std::size_t(r)];
        const std::int32_t id = got[std::size_t(r)];
        std::string& reason = reasons[std::size_t(r)];
        if (!kernels::drawsAToken(draw)) {
            if (id != before[std::size_t(r)])
                reason = "a greedy row was drawn (id " + std::to_string(id) + ")";
        } else {
            const float* row = x.data() + r * n;
            const kernels::ops::TokenCuts cuts(row, n, draw);
            exact += id == kernels::ops::drawToken(row, n, draw);
            if (id < 0 || id >= n || !cuts.kept(id)) {
                reason = "drew " + std::to_string(id) + ", which the cuts do not keep";
            } else {
                const auto span = cuts.spanOf(id);
                if (!(double(draw.u) >= span.before - slack && double(draw.u) < span.through + slack))
                    reason = "drew " + std::to_string(id) + " for u " + std::to_string(draw.u)
                        + ", whose share is [" + std::to_string(span.before) + ", "
                        + std::to_string(span.through) + ")";
            }
        }
        verdicts[std::size_t(r)] = reason.empty() ? 1 : 0;
    }
    ctx.checkExact("pick kept and in its share", verdicts,
        std::vector<std::int32_t>(static_cast<std::size_t>(rows), 1),
        [&](std::size_t i) { return "row " + std::to_string(i) + ": " + reasons[i]; });
    ctx.note(std::to_string(exact) + " of " + std::to_string(rows) + " as the host's pick");
    ctx.measure(4.0 * double(rows * n), launch);
}

} // namespace

void addRowCases(CaseTable& table)
{
    for (const std::int64_t n : { 16, 64, 96, 128, 1001, 2048, 4096, 5003 })
        for (const std::int64_t rows : { 1, 7, 647 })
            for (const bool weighted : { true, false })
                for (const bool inPlace : { false, true })
                    table.add("rmsNormRows",
                        "rows " + std::to_string(rows) + " n " + std::to_string(n)
                            + (weighted ? "" : " no weight") + (inPlace ? " in place" : ""),
                        rows == 7 && (n == 96 || n == 1001) && weighted,
                        [=](CaseContext& ctx) { runRmsNorm(ctx, rows, n, weighted, inPlace); });
    for (const std::int64_t n : { 64, 96, 128, 640, 1001, 2048, 4096 })
        for (const std::int64_t rows : { 1, 8, 9, 647 })
            for (const bool quantized : { false, true }) {
                if (quantized && n % 128 != 0)
                    continue; // addRmsNormQuantizes: multiples of 128
                for (const auto& [withDelta, withAddend] : { std::pair { true, false },
                         std::pair { false, false }, std::pair { true, true } })
                    table.add(quantized ? "addRmsNormRowsQuantized" : "addRmsNormRows",
                        "rows " + std::to_string(rows) + " n " + std::to_string(n)
                            + (withDelta ? " delta" : " no delta")
                            + (withAddend ? " gated addend" : ""),
                        rows == 9 && (n == 128 || n == 96), [=](CaseContext& ctx) {
                            runAddRmsNorm(ctx, rows, n, withDelta, withAddend, quantized);
                        });
            }
    for (const std::int64_t count : { 1, 9, 647 })
        table.add("gatherF32Rows", "from 1921 rows of 96, " + std::to_string(count) + " rows",
            count == 9, [=](CaseContext& ctx) { runGatherF32Rows(ctx, 1921, 96, count); });
    for (const std::int64_t n : { 1, 3, 4096, 1000001 })
        table.add("countNonFinite", "n " + std::to_string(n), n == 4096,
            [=](CaseContext& ctx) { runCountNonFinite(ctx, n); });
    // Greedy sampling: vocabularies 1,000, 1,921 (1,920 + 1), 8,192/8,193 (the kernel's
    // chunk), 151,936 and 248,320; 1..64 rows (a step of up to 64 sequences).
    for (const std::int64_t n : { 1000, 1921, 8192, 8193, 151936, 248320 })
        for (const std::int64_t rows : { 1, 2, 9, 33, 64 })
            for (const bool ties : { false, true })
                table.add("argmaxRows",
                    "rows " + std::to_string(rows) + " vocab " + std::to_string(n)
                        + (ties ? " ties" : ""),
                    (rows == 9 || rows == 64) && (n == 1921 || n == 151936),
                    [=](CaseContext& ctx) { runArgmax(ctx, rows, n, ties); });
    // Sampling where the logits are: the same vocabularies, 1..64 rows, each cut alone and
    // all of them mixed with greedy rows and rows of -inf and NaN.
    const std::pair<Cut, const char*> cuts[] { { Cut::Temperature, "temperature" },
        { Cut::TopK, "top-k" }, { Cut::TopP, "top-p" }, { Cut::TopKTopPMinP, "top-k top-p min-p" },
        { Cut::Mixed, "mixed" } };
    for (const std::int64_t n : { 1000, 1921, 8193, 151936, 248320 })
        for (const std::int64_t rows : { 1, 9, 64 })
            for (const auto& [cut, name] : cuts)
                table.add("drawTokens",
                    "rows " + std::to_string(rows) + " vocab " + std::to_string(n) + " " + name,
                    rows == 9 && (n == 1921 || n == 248320),
                    [=](CaseContext& ctx) { runDrawTokens(ctx, rows, n, cut); });
}

} // namespace cw::backend_ops
