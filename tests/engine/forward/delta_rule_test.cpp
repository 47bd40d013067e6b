// ops::gatedDeltaRuleChunked and ops::gatedDeltaRuleRecurrent on every CPU kernel path this
// machine has (portable, AVX2, AVX-512) against the plain loops they replaced, kept here as the
// reference: outputs and final states at the engine's strided layout, token counts around the
// chunk size, head sizes 64 and 128, and gates from none to strong decay.
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

// The scalar recurrence, token by token (the engine's kernel before the vector versions).
void referenceRecurrent(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride)
{
    const float qScale = 1.0f / std::sqrt(float(dk));
    std::vector<float> delta(static_cast<std::size_t>(dv));
    for (std::int64_t t = 0; t < nTokens; ++t) {
        const float* qt = q + t * qkStride;
        const float* kt = k + t * qkStride;
        const float* vt = v + t * vStride;
        const float decay = std::exp(g[t]);
        for (std::int64_t i = 0; i < dk * dv; ++i)
            state[i] *= decay;
        std::fill(delta.begin(), delta.end(), 0.0f);
        for (std::int64_t i = 0; i < dk; ++i)
            for (std::int64_t j = 0; j < dv; ++j)
                delta[std::size_t(j)] += state[i * dv + j] * kt[i];
        for (std::int64_t j = 0; j < dv; ++j)
            delta[std::size_t(j)] = (vt[j] - delta[std::size_t(j)]) * beta[t];
        float* o = out + t * outStride;
        std::fill(o, o + dv, 0.0f);
        for (std::int64_t i = 0; i < dk; ++i)
            for (std::int64_t j = 0; j < dv; ++j) {
                state[i * dv + j] += kt[i] * delta[std::size_t(j)];
                o[j] += state[i * dv + j] * (qt[i] * qScale);
            }
    }
}

// The scalar chunked form (WY/UT, transformers' torch_chunk_gated_delta_rule).
void referenceChunked(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk)
{
    const float qScale = 1.0f / std::sqrt(float(dk));
    const std::size_t C = std::size_t(chunk);
    std::vector<float> cum(C), A(C * C), U(C * std::size_t(dv)), W(C * std::size_t(dk)),
        vNew(C * std::size_t(dv)), qk(C * C);
    for (std::int64_t start = 0; start < nTokens; start += chunk) {
        const std::int64_t n = std::min<std::int64_t>(chunk, nTokens - start);
        const float* qc = q + start * qkStride;
        const float* kc = k + start * qkStride;
        const float* vc = v + start * vStride;
        float acc = 0.0f;
        for (std::int64_t i = 0; i < n; ++i) {
            acc += g[start + i];
            cum[std::size_t(i)] = acc;
        }
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j <= i; ++j) {
                float kk = 0.0f, qkv = 0.0f;
                for (std::int64_t d = 0; d < dk; ++d) {
                    kk += kc[i * qkStride + d] * kc[j * qkStride + d];
                    qkv += qc[i * qkStride + d] * kc[j * qkStride + d];
                }
                const float decay = std::exp(cum[std::size_t(i)] - cum[std::size_t(j)]);
                A[std::size_t(i) * C + std::size_t(j)] = beta[start + i] * kk * decay;
                qk[std::size_t(i) * C + std::size_t(j)] = qkv * qScale * decay;
            }
        for (std::int64_t i = 0; i < n; ++i) {
            float* ui = U.data() + std::size_t(i) * std::size_t(dv);
            float* wi = W.data() + std::size_t(i) * std::size_t(dk);
            const float b = beta[start + i];
            const float e = std::exp(cum[std::size_t(i)]);
            for (std::int64_t d = 0; d < dv; ++d)
                ui[d] = b * vc[i * vStride + d];
            for (std::int64_t d = 0; d < dk; ++d)
                wi[d] = b * kc[i * qkStride + d] * e;
            for (std::int64_t j = 0; j < i; ++j) {
                const float a = A[std::size_t(i) * C + std::size_t(j)];
                for (std::int64_t d = 0; d < dv; ++d)
                    ui[d] -= a * U[std::size_t(j) * std::size_t(dv) + std::size_t(d)];
                for (std::int64_t d = 0; d < dk; ++d)
                    wi[d] -= a * W[std::size_t(j) * std::size_t(dk) + std::size_t(d)];
            }
        }
        for (std::int64_t i = 0; i < n; ++i) {
            float* vn = vNew.data() + std::size_t(i) * std::size_t(dv);
            float* o = out + (start + i) * outStride;
            const float e = std::exp(cum[std::size_t(i)]) * qScale;
            for (std::int64_t d = 0; d < dv; ++d) {
                vn[d] = U[std::size_t(i) * std::size_t(dv) + std::size_t(d)];
                o[d] = 0.0f;
            }
            for (std::int64_t r = 0; r < dk; ++r) {
                const float wr = W[std::size_t(i) * std::size_t(dk) + std::size_t(r)];
                const float qr = qc[i * qkStride + r] * e;
                for (std::int64_t d = 0; d < dv; ++d) {
                    vn[d] -= wr * state[r * dv + d];
                    o[d] += qr * state[r * dv + d];
                }
            }
        }
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j <= i; ++j)
                for (std::int64_t d = 0; d < dv; ++d)
                    out[(start + i) * outStride + d] += qk[std::size_t(i) * C + std::size_t(j)]
                        * vNew[std::size_t(j) * std::size_t(dv) + std::size_t(d)];
        const float last = cum[std::size_t(n - 1)];
        for (std::int64_t i = 0; i < dk * dv; ++i)
            state[i] *= std::exp(last);
        for (std::int64_t j = 0; j < n; ++j) {
            const float e = std::exp(last - cum[std::size_t(j)]);
            for (std::int64_t r = 0; r < dk; ++r)
                for (std::int64_t d = 0; d < dv; ++d)
                    state[r * dv + d] += kc[j * qkStride + r] * e
                        * vNew[std::size_t(j) * std::size_t(dv) + std::size_t(d)];
        }
    }
}

enum class Gates {
    None, // g ~ 0 and beta ~ 1: nothing decays, the forward substitution at its largest
    Ordinary, // the engine tests' mix: g in about [-3.5, 0]
    Strong, // g in [-20, -3]: exp(c) underflows within a chunk
};

const char* gateName(Gates gates)
{
    return gates == Gates::None ? "none" : gates == Gates::Ordinary ? "ordinary" : "strong";
}

constexpr float kGuard = 12345.0f; // fills the gaps between output rows

// One head's inputs in the engine's layout: q, k and v of a token share a row (stride
// 2 dk + dv + 8) and output rows have a gap of 16 floats that must stay untouched.
struct Problem {
    std::int64_t n, dk, dv, rowStride, outStride;
    std::vector<float> rows, g, beta, state;

    Problem(std::mt19937& rng, std::int64_t tokens, std::int64_t keyDim, std::int64_t valueDim,
        Gates gates)
        : n(tokens)
        , dk(keyDim)
        , dv(valueDim)
        , rowStride(2 * keyDim + valueDim + 8)
        , outStride(valueDim + 16)
    {
        std::normal_distribution<float> normal(0.0f, 1.0f);
        rows.resize(std::size_t(n * rowStride));
        for (auto& x : rows)
            x = normal(rng);
        for (std::int64_t t = 0; t < n; ++t) {
            ops::l2Normalize(q() + t * rowStride, dk, 1e-6f);
            ops::l2Normalize(k() + t * rowStride, dk, 1e-6f);
        }
        std::uniform_real_distribution<float> u(-3.0f, 1.0f), unit(0.0f, 1.0f);
        for (std::int64_t t = 0; t < n; ++t) {
            if (gates == Gates::None) {
                g.push_back(-0.01f * unit(rng));
                beta.push_back(0.9f + 0.1f * unit(rng));
            } else if (gates == Gates::Ordinary) {
                g.push_back(-std::exp(u(rng)) * ops::softplus(u(rng)));
                beta.push_back(ops::sigmoid(2.0f * u(rng)));
            } else {
                g.push_back(-3.0f - 17.0f * unit(rng));
                beta.push_back(ops::sigmoid(2.0f * u(rng)));
            }
        }
        std::normal_distribution<float> small(0.0f, 0.3f);
        state.resize(std::size_t(dk * dv));
        for (auto& x : state)
            x = small(rng);
    }

    float* q() { return rows.data(); }
    float* k() { return rows.data() + dk; }
    float* v() { return rows.data() + 2 * dk; }
    std::vector<float> freshOut() const
    {
        return std::vector<float>(std::size_t(n * outStride), kGuard);
    }
};

double maxAbs(const std::vector<float>& x)
{
    double m = 0.0;
    for (float v : x)
        m = std::max(m, double(std::fabs(v)));
    return m;
}

// Largest |a - b| over the values, relative to max(1, max |b|); a NaN counts as infinite.
double relativeError(const std::vector<float>& a, const std::vector<float>& b)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(double(a[i]) - double(b[i]));
        worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
    return worst / std::max(1.0, maxAbs(b));
}

// The tolerance: float rounding of sums of a few hundred terms, about 40 times what the vector
// paths measure (their worst case here is 6.7e-7). Deliberate bugs tried against it (the decode
// step's decay left out; the last row of each forward-substitution block skipped) fail by
// 4e-5 to 0.2.
constexpr double kTolerance = 3e-5;

struct PathRun {
    quant::CpuKernelPath path;
    const char* name;
};

// The kernel paths this CPU can run; the forced path is restored afterwards.
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
};

void expectOutputAndStateMatch(const std::vector<float>& out, const std::vector<float>& refOut,
    const std::vector<float>& state, const std::vector<float>& refState, const Problem& p,
    const char* what, double& worst)
{
    for (std::int64_t t = 0; t < p.n; ++t)
        for (std::int64_t d = p.dv; d < p.outStride; ++d)
            ASSERT_EQ(out[std::size_t(t * p.outStride + d)], kGuard)
                << what << ": wrote past row " << t << " of the output";
    const double outError = relativeError(out, refOut);
    const double stateError = relativeError(state, refState);
    worst = std::max({ worst, outError, stateError });
    EXPECT_LE(outError, kTolerance) << what << ": output";
    EXPECT_LE(stateError, kTolerance) << what << ": state";
}

} // namespace

TEST(GatedDeltaRule, chunkedMatchesReferenceOnEveryPath)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        ASSERT_EQ(quant::activeCpuKernelPath(), run.path);
        double worst = 0.0;
        std::mt19937 rng(21);
        for (std::int64_t n : { 1, 2, 63, 64, 65, 200 })
            for (auto [dk, dv] : { std::pair { 64, 64 }, std::pair { 128, 128 },
                     std::pair { 64, 128 }, std::pair { 128, 64 } })
                for (Gates gates : { Gates::None, Gates::Ordinary, Gates::Strong })
                    for (int chunk : { 64, 24 }) {
                        Problem p(rng, n, dk, dv, gates);
                        char what[128];
                        std::snprintf(what, sizeof what, "%s n=%d dk=%d dv=%d gates %s chunk %d",
                            run.name, int(n), dk, dv, gateName(gates), chunk);
                        auto refState = p.state, state = p.state;
                        auto refOut = p.freshOut(), out = p.freshOut();
                        referenceChunked(p.q(), p.k(), p.rowStride, p.v(), p.rowStride, p.g.data(),
                            p.beta.data(), n, dk, dv, refState.data(), refOut.data(), p.outStride,
                            chunk);
                        ops::gatedDeltaRuleChunked(p.q(), p.k(), p.rowStride, p.v(), p.rowStride,
                            p.g.data(), p.beta.data(), n, dk, dv, state.data(), out.data(),
                            p.outStride, chunk);
                        expectOutputAndStateMatch(out, refOut, state, refState, p, what, worst);
                    }
        std::printf("chunked, %s: worst error %.3g of max(1, max |reference|)\n", run.name, worst);
    }
}

TEST(GatedDeltaRule, recurrentMatchesReferenceOnEveryPath)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        double worst = 0.0;
        std::mt19937 rng(22);
        for (std::int64_t n : { 1, 2, 63, 65 })
            for (auto [dk, dv] : { std::pair { 64, 64 }, std::pair { 128, 128 },
                     std::pair { 64, 128 }, std::pair { 128, 64 } })
                for (Gates gates : { Gates::None, Gates::Ordinary, Gates::Strong }) {
                    Problem p(rng, n, dk, dv, gates);
                    char what[128];
                    std::snprintf(what, sizeof what, "%s n=%d dk=%d dv=%d gates %s", run.name,
                        int(n), dk, dv, gateName(gates));
                    auto refState = p.state, state = p.state;
                    auto refOut = p.freshOut(), out = p.freshOut();
                    referenceRecurrent(p.q(), p.k(), p.rowStride, p.v(), p.rowStride, p.g.data(),
                        p.beta.data(), n, dk, dv, refState.data(), refOut.data(), p.outStride);
                    ops::gatedDeltaRuleRecurrent(p.q(), p.k(), p.rowStride, p.v(), p.rowStride,
                        p.g.data(), p.beta.data(), n, dk, dv, state.data(), out.data(),
                        p.outStride);
                    expectOutputAndStateMatch(out, refOut, state, refState, p, what, worst);
                }
        std::printf(
            "recurrent, %s: worst error %.3g of max(1, max |reference|)\n", run.name, worst);
    }
}

// A prompt's chunks, then decode steps, on the vector paths: the state the chunked form leaves
// is the one the token-by-token form continues from (what a conversation does).
TEST(GatedDeltaRule, decodeContinuesFromThePromptState)
{
    for (const PathRun& run : availablePaths()) {
        const ForcedPath forced(run.path);
        std::mt19937 rng(23);
        Problem p(rng, 140, 128, 128, Gates::Ordinary);
        auto refState = p.state, state = p.state;
        auto refOut = p.freshOut(), out = p.freshOut();
        referenceRecurrent(p.q(), p.k(), p.rowStride, p.v(), p.rowStride, p.g.data(), p.beta.data(),
            p.n, p.dk, p.dv, refState.data(), refOut.data(), p.outStride);
        const std::int64_t prompt = 130;
        ops::gatedDeltaRuleChunked(p.q(), p.k(), p.rowStride, p.v(), p.rowStride, p.g.data(),
            p.beta.data(), prompt, p.dk, p.dv, state.data(), out.data(), p.outStride);
        for (std::int64_t t = prompt; t < p.n; ++t)
            ops::gatedDeltaRuleRecurrent(p.q() + t * p.rowStride, p.k() + t * p.rowStride,
                p.rowStride, p.v() + t * p.rowStride, p.rowStride, p.g.data() + t,
                p.beta.data() + t, 1, p.dk, p.dv, state.data(), out.data() + t * p.outStride,
                p.outStride);
        double worst = 0.0;
        expectOutputAndStateMatch(out, refOut, state, refState, p, run.name, worst);
    }
}

// The vector kernels sum the same terms in the same order whatever the register width, so a
// machine's answer does not depend on whether it has AVX-512.
TEST(GatedDeltaRule, avx2AndAvx512AgreeBitForBit)
{
    if (!quant::cpuSupportsAvx512())
        GTEST_SKIP() << "no AVX-512 on this CPU";
    std::mt19937 rng(24);
    Problem p(rng, 150, 128, 128, Gates::Ordinary);
    std::vector<float> out[2], state[2];
    const quant::CpuKernelPath paths[2]
        = { quant::CpuKernelPath::Avx2, quant::CpuKernelPath::Avx512 };
    for (int i = 0; i < 2; ++i) {
        const ForcedPath forced(paths[i]);
        state[i] = p.state;
        out[i] = p.freshOut();
        ops::gatedDeltaRuleChunked(p.q(), p.k(), p.rowStride, p.v(), p.rowStride, p.g.data(),
            p.beta.data(), p.n - 1, p.dk, p.dv, state[i].data(), out[i].data(), p.outStride);
        const std::int64_t t = p.n - 1;
        ops::gatedDeltaRuleRecurrent(p.q() + t * p.rowStride, p.k() + t * p.rowStride, p.rowStride,
            p.v() + t * p.rowStride, p.rowStride, p.g.data() + t, p.beta.data() + t, 1, p.dk, p.dv,
            state[i].data(), out[i].data() + t * p.outStride, p.outStride);
    }
    EXPECT_EQ(out[0], out[1]);
    EXPECT_EQ(state[0], state[1]);
}
