#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dot.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace ops = cw::kernels::ops;

namespace {

std::vector<float> randomVector(std::mt19937& rng, std::size_t n, float scale = 1.0f)
{
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

struct DeltaInputs {
    std::int64_t n, dk, dv;
    std::vector<float> q, k, v, g, beta, state;
};

DeltaInputs makeDeltaInputs(std::mt19937& rng, std::int64_t n, std::int64_t dk, std::int64_t dv)
{
    DeltaInputs in { n, dk, dv, randomVector(rng, std::size_t(n * dk)),
        randomVector(rng, std::size_t(n * dk)), randomVector(rng, std::size_t(n * dv)), {}, {},
        randomVector(rng, std::size_t(dk * dv), 0.3f) };
    for (std::int64_t t = 0; t < n; ++t) {
        ops::l2Normalize(in.q.data() + t * dk, dk, 1e-6f);
        ops::l2Normalize(in.k.data() + t * dk, dk, 1e-6f);
    }
    std::uniform_real_distribution<float> u(-3.0f, 1.0f);
    for (std::int64_t t = 0; t < n; ++t) {
        in.g.push_back(-std::exp(u(rng)) * ops::softplus(u(rng)));
        in.beta.push_back(ops::sigmoid(u(rng) * 2.0f));
    }
    return in;
}

} // namespace

TEST(CpuOps, chunkedDeltaRuleEqualsRecurrent)
{
    std::mt19937 rng(7);
    for (auto [n, dk, dv, chunk] : { std::tuple { 1, 16, 16, 64 }, std::tuple { 37, 16, 32, 8 },
             std::tuple { 130, 32, 16, 64 }, std::tuple { 200, 8, 24, 64 } }) {
        auto in = makeDeltaInputs(rng, n, dk, dv);
        auto s1 = in.state, s2 = in.state;
        std::vector<float> o1(std::size_t(n * dv)), o2(std::size_t(n * dv));
        ops::gatedDeltaRuleRecurrent(in.q.data(), in.k.data(), dk, in.v.data(), dv, in.g.data(),
            in.beta.data(), n, dk, dv, s1.data(), o1.data(), dv);
        ops::gatedDeltaRuleChunked(in.q.data(), in.k.data(), dk, in.v.data(), dv, in.g.data(),
            in.beta.data(), n, dk, dv, s2.data(), o2.data(), dv, chunk);
        for (std::size_t i = 0; i < o1.size(); ++i)
            ASSERT_NEAR(o1[i], o2[i], 1e-4f * (1.0f + std::fabs(o1[i]))) << "n=" << n << " i=" << i;
        for (std::size_t i = 0; i < s1.size(); ++i)
            ASSERT_NEAR(s1[i], s2[i], 1e-4f * (1.0f + std::fabs(s1[i]))) << "state " << i;
    }
}

TEST(CpuOps, deltaRuleSplitAcrossCallsEqualsOneCall)
{
    std::mt19937 rng(8);
    auto in = makeDeltaInputs(rng, 50, 16, 16);
    auto s1 = in.state, s2 = in.state;
    std::vector<float> o1(50 * 16), o2(50 * 16);
    ops::gatedDeltaRuleChunked(in.q.data(), in.k.data(), 16, in.v.data(), 16, in.g.data(),
        in.beta.data(), 50, 16, 16, s1.data(), o1.data(), 16);
    ops::gatedDeltaRuleChunked(in.q.data(), in.k.data(), 16, in.v.data(), 16, in.g.data(),
        in.beta.data(), 20, 16, 16, s2.data(), o2.data(), 16);
    ops::gatedDeltaRuleRecurrent(in.q.data() + 20 * 16, in.k.data() + 20 * 16, 16,
        in.v.data() + 20 * 16, 16, in.g.data() + 20, in.beta.data() + 20, 30, 16, 16, s2.data(),
        o2.data() + 20 * 16, 16);
    for (std::size_t i = 0; i < o1.size(); ++i)
        ASSERT_NEAR(o1[i], o2[i], 1e-4f * (1.0f + std::fabs(o1[i])));
}

TEST(CpuOps, causalConvMatchesNaiveAndCarriesState)
{
    std::mt19937 rng(3);
    const int K = 4, C = 5, T = 9;
    auto x = randomVector(rng, T * C);
    auto w = randomVector(rng, C * K);
    std::vector<float> state(C * (K - 1), 0.0f), out(T * C);
    // First 4 tokens, then 5 more with the carried state.
    ops::causalConv1dSilu(x.data(), C, 4, C, w.data(), K, state.data(), out.data(), C);
    ops::causalConv1dSilu(
        x.data() + 4 * C, C, 5, C, w.data(), K, state.data(), out.data() + 4 * C, C);
    for (int t = 0; t < T; ++t)
        for (int c = 0; c < C; ++c) {
            float acc = 0.0f;
            for (int i = 0; i < K; ++i) {
                const int src = t - (K - 1) + i;
                if (src >= 0)
                    acc += w[std::size_t(c * K + i)] * x[std::size_t(src * C + c)];
            }
            EXPECT_NEAR(out[std::size_t(t * C + c)], ops::silu(acc), 1e-5f);
        }
}

namespace {

// n queries at positions [n0, n0 + n) against keys [0, n0 + n), compared with a double
// precision causal softmax attention.
void expectAttentionMatchesNaive(int n0, int n, int d, cw::kernels::quant::CpuKernelPath path)
{
    cw::kernels::quant::setCpuKernelPath(path);
    std::mt19937 rng(unsigned(5 + d + n0));
    const int total = n0 + n;
    auto q = randomVector(rng, std::size_t(n * d)), k = randomVector(rng, std::size_t(total * d)),
         v = randomVector(rng, std::size_t(total * d));
    std::vector<const float*> kp, vp;
    for (int j = 0; j < total; ++j) {
        kp.push_back(k.data() + j * d);
        vp.push_back(v.data() + j * d);
    }
    std::vector<float> out(static_cast<std::size_t>(n * d)), scratch(static_cast<std::size_t>(total));
    const float scale = 1.0f / std::sqrt(float(d));
    ops::attentionHead(q.data(), d, n, n0, kp.data(), vp.data(), total, d, scale, out.data(), d,
        scratch.data());
    for (int i = 0; i < n; ++i) {
        std::vector<double> p(std::size_t(n0 + i + 1));
        double mx = -1e30, sum = 0;
        for (int j = 0; j <= n0 + i; ++j) {
            double s = 0;
            for (int c = 0; c < d; ++c)
                s += double(q[std::size_t(i * d + c)]) * k[std::size_t(j * d + c)];
            p[std::size_t(j)] = s * scale;
            mx = std::max(mx, p[std::size_t(j)]);
        }
        for (auto& x : p) {
            x = std::exp(x - mx);
            sum += x;
        }
        for (int c = 0; c < d; ++c) {
            double o = 0;
            for (int j = 0; j <= n0 + i; ++j)
                o += p[std::size_t(j)] / sum * v[std::size_t(j * d + c)];
            ASSERT_NEAR(out[std::size_t(i * d + c)], o, 1e-5)
                << "d " << d << " query " << i << " dim " << c
                << (path == cw::kernels::quant::CpuKernelPath::Avx2 ? " avx2" : " portable");
        }
    }
}

} // namespace

TEST(CpuOps, attentionMatchesNaiveCausal)
{
    for (auto path : { cw::kernels::quant::CpuKernelPath::Portable,
             cw::kernels::quant::CpuKernelPath::Avx2 }) {
        expectAttentionMatchesNaive(0, 6, 8, path);
        expectAttentionMatchesNaive(0, 9, 12, path); // not a multiple of 8: portable code
        expectAttentionMatchesNaive(30, 5, 128, path); // decode-like: few queries, long cache
        expectAttentionMatchesNaive(3, 17, 72, path); // 64 + 8
    }
    cw::kernels::quant::setCpuKernelPath(cw::kernels::quant::detectedCpuKernelPath());
}

// The heads of one KV group for one new token equal attentionHead run per head, bit for bit
// (decode through the grouped kernel and prefill through the per-head one must agree).
TEST(CpuOps, sharedKvHeadsEqualOneHeadAtATime)
{
    for (auto path : { cw::kernels::quant::CpuKernelPath::Portable,
             cw::kernels::quant::CpuKernelPath::Avx2 }) {
        cw::kernels::quant::setCpuKernelPath(path);
        for (int heads : { 1, 3, 8 }) {
            for (int d : { 8, 64, 72, 128 }) {
                std::mt19937 rng(unsigned(heads * 1000 + d));
                const int nKv = 37;
                auto q = randomVector(rng, std::size_t(heads * d));
                auto k = randomVector(rng, std::size_t(nKv * d)), v = randomVector(rng, std::size_t(nKv * d));
                std::vector<const float*> kp, vp;
                for (int j = 0; j < nKv; ++j) {
                    kp.push_back(k.data() + j * d);
                    vp.push_back(v.data() + j * d);
                }
                std::vector<float> shared(static_cast<std::size_t>(heads * d)),
                    single(static_cast<std::size_t>(heads * d)),
                    scratch(static_cast<std::size_t>(heads * nKv));
                ops::attentionSharedKv(q.data(), d, heads, kp.data(), vp.data(), nKv, d, 0.3f,
                    shared.data(), d, scratch.data());
                for (int h = 0; h < heads; ++h)
                    ops::attentionHead(q.data() + h * d, d, 1, nKv - 1, kp.data(), vp.data(), nKv,
                        d, 0.3f, single.data() + h * d, d, scratch.data());
                for (std::size_t i = 0; i < shared.size(); ++i)
                    ASSERT_EQ(shared[i], single[i]) << "heads " << heads << " d " << d << " at " << i;
            }
        }
    }
    cw::kernels::quant::setCpuKernelPath(cw::kernels::quant::detectedCpuKernelPath());
}

TEST(CpuOps, ropeRotatesOnlyTheRotaryPart)
{
    std::vector<float> inv(4);
    ops::ropeInverseFrequencies(10000.0, 8, inv.data());
    EXPECT_FLOAT_EQ(inv[0], 1.0f);
    std::vector<float> head { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    auto copy = head;
    ops::ropeNeox(head.data(), 8, inv.data(), 3);
    for (int i = 0; i < 4; ++i) {
        const float a = std::cos(3.0f * inv[std::size_t(i)]),
                    b = std::sin(3.0f * inv[std::size_t(i)]);
        EXPECT_NEAR(
            head[std::size_t(i)], copy[std::size_t(i)] * a - copy[std::size_t(i + 4)] * b, 1e-5f);
        EXPECT_NEAR(head[std::size_t(i + 4)],
            copy[std::size_t(i + 4)] * a + copy[std::size_t(i)] * b, 1e-5f);
    }
    EXPECT_EQ(head[8], 9.0f);
    EXPECT_EQ(head[9], 10.0f);
}

TEST(CpuOps, topKOrdersAndKeepsLowerIndexOnTies)
{
    const std::vector<float> x { 0.1f, 0.5f, 0.3f, 0.5f, 0.9f };
    int idx[3];
    float val[3];
    ops::topK(x.data(), 5, 3, idx, val);
    EXPECT_EQ(idx[0], 4);
    EXPECT_EQ(idx[1], 1);
    EXPECT_EQ(idx[2], 3);
}

TEST(CpuOps, rmsNormAndSoftmax)
{
    std::vector<float> x { 3, 4 }, w { 1, 2 }, out(2);
    ops::rmsNorm(x.data(), w.data(), 2, 0.0f, out.data());
    const float r = std::sqrt(12.5f);
    EXPECT_NEAR(out[0], 3 / r, 1e-6f);
    EXPECT_NEAR(out[1], 8 / r, 1e-6f);
    std::vector<float> s { 1000, 1000 };
    ops::softmax(s.data(), 2);
    EXPECT_FLOAT_EQ(s[0], 0.5f);
    std::vector<float> bad { 1, NAN };
    EXPECT_FALSE(ops::allFinite(bad.data(), 2));
}
