// ops::causalConv1dSilu and ops::gatedRmsNorm on every CPU kernel path this machine has
// (portable, AVX2, AVX-512) against plain loops kept here as the reference: the convolution
// at odd token and channel counts (tails of registers and of the 512-channel tiles), kernels
// 2-5, zero and carried conv state, a prompt split in pieces and the engine's strided rows;
// the gated norm with and without a weight.
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace ops = cw::kernels::ops;
namespace quant = cw::kernels::quant;

namespace {

// The convolution channel by channel, in double: out[t][c] = silu(sum_i w[c][i] x[t-K+1+i][c])
// with x before token 0 from the state (oldest first); the state ends as the last K-1 inputs.
void referenceConv(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride)
{
    const int hist = kernel - 1;
    for (std::int64_t c = 0; c < channels; ++c) {
        auto input = [&](std::int64_t src) {
            return src >= 0 ? in[src * inStride + c] : state[c * hist + (src + hist)];
        };
        for (std::int64_t t = 0; t < nTokens; ++t) {
            double acc = 0.0;
            for (int i = 0; i < kernel; ++i)
                acc += double(w[c * kernel + i]) * double(input(t - hist + i));
            out[t * outStride + c] = float(double(acc) / (1.0 + std::exp(-acc)));
        }
        std::vector<float> last(static_cast<std::size_t>(hist));
        for (int j = 0; j < hist; ++j)
            last[std::size_t(j)] = input(nTokens - hist + j);
        std::copy(last.begin(), last.end(), state + c * hist);
    }
}

struct PathRun {
    quant::CpuKernelPath path;
    const char* name;
};

std::vector<PathRun> availablePaths()
{
    std::vector<PathRun> paths { { quant::CpuKernelPath::Portable, "portable" } };
    if (quant::cpuSupportsAvx2())
        paths.push_back({ quant::CpuKernelPath::Avx2, "avx2" });
    if (quant::cpuSupportsAvx512())
        paths.push_back({ quant::CpuKernelPath::Avx512, "avx512" });
    return paths;
}

class ForcedPath {
public:
    explicit ForcedPath(quant::CpuKernelPath path) { quant::setCpuKernelPath(path); }
    ~ForcedPath() { quant::setCpuKernelPath(quant::detectedCpuKernelPath()); }
    ForcedPath(const ForcedPath&) = delete;
    ForcedPath& operator=(const ForcedPath&) = delete;
};

constexpr float kGuard = 12345.0f;

// One convolution problem in the engine's layout: rows of rowStride floats (more than the
// channels, which start at an offset), output rows with a guarded gap after the channels.
struct ConvProblem {
    std::int64_t n, channels, rowStride, outStride, offset = 3;
    int kernel;
    std::vector<float> in, w, state;

    ConvProblem(std::mt19937& rng, std::int64_t tokens, std::int64_t c, int k, bool carried)
        : n(tokens)
        , channels(c)
        , rowStride(c + 11)
        , outStride(c + 5)
        , kernel(k)
        , in(std::size_t(tokens * rowStride + offset))
        , w(std::size_t(c * k))
        , state(std::size_t(c * (k - 1)), 0.0f)
    {
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (auto& x : in)
            x = 2.0f * normal(rng);
        for (auto& x : w)
            x = 0.5f * normal(rng);
        if (carried)
            for (auto& x : state)
                x = 2.0f * normal(rng);
    }
    const float* input() const { return in.data() + offset; }
    std::vector<float> freshOut() const
    {
        return std::vector<float>(std::size_t(n * outStride), kGuard);
    }
};

// |out - ref| <= 1e-5 max(1, |ref|) per value (the reference sums in double; the vector paths
// differ from the portable ones only by their polynomial exp: a few 1e-7 here); guards untouched;
// states equal exactly (copies).
void expectConvMatch(const std::vector<float>& out, const std::vector<float>& ref,
    const std::vector<float>& state, const std::vector<float>& refState, const ConvProblem& p,
    const char* what, double& worst)
{
    int reported = 0;
    for (std::int64_t t = 0; t < p.n; ++t)
        for (std::int64_t c = 0; c < p.outStride; ++c) {
            const std::size_t i = std::size_t(t * p.outStride + c);
            if (c >= p.channels) {
                EXPECT_EQ(out[i], kGuard) << what << ": wrote past the channels, t=" << t;
                continue;
            }
            const double err = std::fabs(double(out[i]) - double(ref[i]))
                / std::max(1.0, std::fabs(double(ref[i])));
            worst = std::max(worst, err);
            if (!(err <= 1e-5) && reported++ < 5)
                ADD_FAILURE() << what << ": t=" << t << " c=" << c << " got " << out[i] << " want "
                              << ref[i];
        }
    EXPECT_EQ(state, refState) << what << ": conv state";
}

} // namespace

TEST(CausalConv, matchesReferenceOnEveryPath)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        double worst = 0.0;
        std::mt19937 rng(31);
        for (std::int64_t n : { 1, 2, 3, 5, 64, 257 })
            for (std::int64_t channels : { 1, 7, 16, 37, 523, 1031 })
                for (int kernel : { 2, 3, 4, 5 })
                    for (bool carried : { false, true }) {
                        if (n > 64 && channels > 37 && kernel != 4)
                            continue; // the long cases once, at the model's kernel
                        ConvProblem p(rng, n, channels, kernel, carried);
                        char what[160];
                        std::snprintf(what, sizeof what, "%s T=%d channels=%d kernel=%d %s",
                            run.name, int(n), int(channels), kernel,
                            carried ? "carried state" : "zero state");
                        auto refState = p.state, state = p.state;
                        auto refOut = p.freshOut(), out = p.freshOut();
                        referenceConv(p.input(), p.rowStride, n, channels, p.w.data(), kernel,
                            refState.data(), refOut.data(), p.outStride);
                        ops::causalConv1dSilu(p.input(), p.rowStride, n, channels, p.w.data(),
                            kernel, state.data(), out.data(), p.outStride);
                        expectConvMatch(out, refOut, state, refState, p, what, worst);
                    }
        std::printf("conv, %s: worst error %.3g of max(1, |reference|)\n", run.name, worst);
    }
}

// A prompt in pieces (1, 2, 3 and 5 tokens: shorter and longer than the state, then decode
// steps) gives what one call over all of it gives: the state carries the inputs across.
TEST(CausalConv, piecesCarryTheStateAcrossCalls)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        std::mt19937 rng(32);
        ConvProblem p(rng, 17, 531, 4, true);
        auto refState = p.state, state = p.state;
        auto refOut = p.freshOut(), out = p.freshOut();
        referenceConv(p.input(), p.rowStride, p.n, p.channels, p.w.data(), p.kernel,
            refState.data(), refOut.data(), p.outStride);
        std::int64_t t = 0;
        for (std::int64_t piece : { 1, 2, 3, 5, 1, 1, 4 }) {
            ops::causalConv1dSilu(p.input() + t * p.rowStride, p.rowStride, piece, p.channels,
                p.w.data(), p.kernel, state.data(), out.data() + t * p.outStride, p.outStride);
            t += piece;
        }
        ASSERT_EQ(t, p.n);
        double worst = 0.0;
        expectConvMatch(out, refOut, state, refState, p, run.name, worst);
    }
}

// Channel blocks as the engine's pool hands them out give the whole call's answer.
TEST(CausalConv, channelBlocksGiveTheWholeAnswer)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        std::mt19937 rng(33);
        ConvProblem p(rng, 6, 1100, 4, true);
        auto wholeState = p.state, state = p.state;
        auto whole = p.freshOut(), out = p.freshOut();
        ops::causalConv1dSilu(p.input(), p.rowStride, p.n, p.channels, p.w.data(), p.kernel,
            wholeState.data(), whole.data(), p.outStride);
        for (std::int64_t c0 = 0; c0 < p.channels; c0 += 300) {
            const std::int64_t nc = std::min<std::int64_t>(300, p.channels - c0);
            ops::causalConv1dSilu(p.input() + c0, p.rowStride, p.n, nc, p.w.data() + c0 * 4, 4,
                state.data() + c0 * 3, out.data() + c0, p.outStride);
        }
        EXPECT_EQ(out, whole) << run.name;
        EXPECT_EQ(state, wholeState) << run.name;
    }
}

// Every channel runs the same lanes' arithmetic whatever the register width.
TEST(CausalConv, avx2AndAvx512AgreeBitForBit)
{
    if (!quant::cpuSupportsAvx512())
        GTEST_SKIP() << "no AVX-512 on this CPU";
    std::mt19937 rng(34);
    ConvProblem p(rng, 21, 1037, 4, true);
    std::vector<float> out[2], state[2];
    const quant::CpuKernelPath paths[2]
        = { quant::CpuKernelPath::Avx2, quant::CpuKernelPath::Avx512 };
    for (int i = 0; i < 2; ++i) {
        const ForcedPath forced(paths[i]);
        state[i] = p.state;
        out[i] = p.freshOut();
        ops::causalConv1dSilu(p.input(), p.rowStride, p.n, p.channels, p.w.data(), p.kernel,
            state[i].data(), out[i].data(), p.outStride);
    }
    EXPECT_EQ(out[0], out[1]);
    EXPECT_EQ(state[0], state[1]);
}

// gatedRmsNorm against rmsNorm's formula then x * silu(gate), in double: row widths of whole
// AVX-512 registers, whole AVX2 ones only (24) and neither (20, portable loops on every path).
TEST(GatedRmsNorm, matchesReferenceOnEveryPath)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        std::mt19937 rng(35);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        double worst = 0.0;
        for (std::int64_t n : { 16, 20, 24, 128 })
            for (bool weighted : { false, true }) {
                const std::int64_t rows = 37;
                const float eps = 1e-6f;
                std::vector<float> x(std::size_t(rows * n)), gate(x.size()),
                    w(static_cast<std::size_t>(n));
                for (auto* v : { &x, &gate, &w })
                    for (auto& e : *v)
                        e = 3.0f * normal(rng);
                std::vector<float> ref(x.size());
                for (std::int64_t r = 0; r < rows; ++r) {
                    double sum = 0.0;
                    for (std::int64_t i = 0; i < n; ++i)
                        sum += double(x[std::size_t(r * n + i)]) * x[std::size_t(r * n + i)];
                    const double scale = 1.0 / std::sqrt(sum / double(n) + eps);
                    for (std::int64_t i = 0; i < n; ++i) {
                        const std::size_t k = std::size_t(r * n + i);
                        const double g = gate[k];
                        ref[k] = float(x[k] * scale * (weighted ? w[std::size_t(i)] : 1.0)
                            * (g / (1.0 + std::exp(-g))));
                    }
                }
                ops::gatedRmsNorm(
                    x.data(), gate.data(), rows, n, weighted ? w.data() : nullptr, eps);
                int reported = 0;
                for (std::size_t k = 0; k < x.size(); ++k) {
                    const double err = std::fabs(double(x[k]) - double(ref[k]))
                        / std::max(1.0, std::fabs(double(ref[k])));
                    worst = std::max(worst, err);
                    if (!(err <= 1e-5) && reported++ < 5)
                        ADD_FAILURE() << run.name << " n=" << n << (weighted ? " weighted" : "")
                                      << " at " << k << ": got " << x[k] << " want " << ref[k];
                }
            }
        std::printf("gated norm, %s: worst error %.3g of max(1, |reference|)\n", run.name, worst);
    }
}
