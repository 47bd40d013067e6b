#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/quant_blocks.h"
#include "kernels/cpu/quant/quantize.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace cw::kernels::quant;
using cw::kernels::TensorType;

namespace {

std::vector<float> gaussian(std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

// Root-mean-square error of quantize -> dequantize relative to the RMS of the input.
double roundTripError(TensorType type, const std::vector<float>& x)
{
    const auto bytes = *cw::kernels::rowBytes(type, x.size());
    std::vector<std::uint8_t> q(bytes);
    EXPECT_TRUE(quantizeRow(type, x.data(), q.data(), std::int64_t(x.size())));
    std::vector<float> y(x.size());
    dequantizeRow(type, q.data(), y.data(), std::int64_t(x.size()));
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
        ref += double(x[i]) * x[i];
    }
    return std::sqrt(err / ref);
}

} // namespace

TEST(Quantize, roundTripErrorIsWithinEachTypesBound)
{
    const auto x = gaussian(4096, 1);
    // Bounds a little above what each format gives on this Gaussian data (measured: Q8_0
    // 0.0054, Q4_0 0.0875, Q4_1 0.078, Q5_0 0.043, Q5_1 0.038, Q4_K 0.071, Q5_K 0.036,
    // Q6_K 0.018, F16 0.0002, BF16 0.0017).
    const std::pair<TensorType, double> bounds[] = {
        { TensorType::F32, 0.0 },
        { TensorType::F16, 3e-4 },
        { TensorType::BF16, 2.5e-3 },
        { TensorType::Q8_0, 0.007 },
        { TensorType::Q4_0, 0.1 },
        { TensorType::Q4_1, 0.09 },
        { TensorType::Q5_0, 0.05 },
        { TensorType::Q5_1, 0.045 },
        { TensorType::Q4_K, 0.08 },
        { TensorType::Q5_K, 0.04 },
        { TensorType::Q6_K, 0.02 },
    };
    for (const auto& [type, bound] : bounds) {
        const double err = roundTripError(type, x);
        EXPECT_LE(err, bound) << cw::kernels::tensorTypeTraits(std::uint32_t(type))->name;
        if (type != TensorType::F32) {
            EXPECT_GT(err, 0.0);
        }
    }
}

TEST(Quantize, zerosStayZero)
{
    const std::vector<float> x(512, 0.0f);
    for (TensorType type : { TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K, TensorType::Q5_K,
             TensorType::Q6_K }) {
        std::vector<std::uint8_t> q(*cw::kernels::rowBytes(type, 512));
        ASSERT_TRUE(quantizeRow(type, x.data(), q.data(), 512));
        std::vector<float> y(512, 1.0f);
        dequantizeRow(type, q.data(), y.data(), 512);
        for (float v : y)
            ASSERT_EQ(v, 0.0f);
    }
}

TEST(Quantize, q8_0MatchesTheReferenceFormula)
{
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j)
        x[std::size_t(j)] = float(j);
    BlockQ8_0 b;
    ASSERT_TRUE(quantizeRow(TensorType::Q8_0, x.data(), &b, 32));
    EXPECT_EQ(b.d, fp32ToFp16(31.0f / 127.0f));
    EXPECT_EQ(b.qs[31], 127);
    EXPECT_EQ(b.qs[1], 4); // round(127/31) = round(4.097)
    EXPECT_EQ(b.qs[0], 0);
}

TEST(Quantize, exactlyRepresentableQ4_KValuesSurvive)
{
    // Every sub-block holds 0..15 times one step: the reference search finds scale 1, min 0.
    std::vector<float> x(256);
    for (int i = 0; i < 256; ++i)
        x[std::size_t(i)] = float(i % 16);
    BlockQ4_K b;
    ASSERT_TRUE(quantizeRow(TensorType::Q4_K, x.data(), &b, 256));
    std::vector<float> y(256);
    dequantizeRow(TensorType::Q4_K, &b, y.data(), 256);
    for (int i = 0; i < 256; ++i)
        EXPECT_NEAR(y[std::size_t(i)], x[std::size_t(i)], 1e-2) << i;
}

TEST(Quantize, refusesTypesItCannotWrite)
{
    float x[256] = {};
    std::uint8_t out[256];
    EXPECT_FALSE(quantizeRow(TensorType::IQ4_XS, x, out, 256));
    EXPECT_FALSE(quantizeRow(TensorType::Q2_K, x, out, 256));
    EXPECT_FALSE(canQuantize(TensorType::Q3_K));
    EXPECT_TRUE(canQuantize(TensorType::Q6_K));
}

TEST(QuantizationMix, q4_K_MFollowsLlamaCppRules)
{
    // A qwen3moe-like model: 48 layers, 128 experts.
    std::vector<std::string> names = { "token_embd.weight", "output_norm.weight", "output.weight" };
    for (int i = 0; i < 48; ++i) {
        for (const char* t : { "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                 "attn_q_norm", "ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps" })
            names.push_back("blk." + std::to_string(i) + "." + t + ".weight");
    }
    QuantizationMix mix("Q4_K_M", names, 48, 128);
    int q6Down = 0, q6V = 0;
    for (const auto& name : names) {
        const bool oneD = name.find("norm") != std::string::npos;
        const TensorType t = mix.next(name,
            oneD ? 1 : (name.find("exps") != std::string::npos ? 3 : 2), 2048, TensorType::BF16);
        if (name == "output.weight") {
            EXPECT_EQ(t, TensorType::Q6_K);
        } else if (name == "token_embd.weight") {
            EXPECT_EQ(t, TensorType::Q4_K);
        } else if (oneD || name.find("ffn_gate_inp") != std::string::npos) {
            EXPECT_EQ(t, TensorType::BF16) << name; // norms and the router keep the source type
        } else if (name.find("ffn_down_exps") != std::string::npos) {
            q6Down += t == TensorType::Q6_K;
        } else if (name.find("attn_v") != std::string::npos) {
            q6V += t == TensorType::Q6_K;
        } else {
            EXPECT_EQ(t, TensorType::Q4_K) << name;
        }
    }
    // use_more_bits(i, 48): i < 6, i >= 42, or (i - 6) % 3 == 2 -> 6 + 6 + 12 = 24 layers.
    EXPECT_EQ(q6Down, 24);
    EXPECT_EQ(q6V, 24);

    MixTensorContext c;
    c.ne0 = 2048;
    c.nLayers = 48;
    c.nExperts = 128;
    c.ffnDownIndex = 0;
    EXPECT_EQ(quantizedTypeForMix("q4_k_m", "blk.7.ffn_down_exps.weight", c), TensorType::Q4_K);
    EXPECT_EQ(quantizedTypeForMix("q4_k_m", "blk.8.ffn_down_exps.weight", c), TensorType::Q6_K);
    c.ne0 = 100; // not a multiple of 256 or 32
    EXPECT_EQ(quantizedTypeForMix("q4_k_m", "blk.1.attn_q.weight", c), TensorType::F16);
    c.ne0 = 96; // multiple of 32 only: Q4_K falls back to Q5_0
    EXPECT_EQ(quantizedTypeForMix("q4_k_m", "blk.1.attn_q.weight", c), TensorType::Q5_0);
    c.ne0 = 2048;
    EXPECT_EQ(quantizedTypeForMix("q8_0", "output.weight", c), TensorType::Q8_0);
    EXPECT_EQ(quantizedTypeForMix("bf16", "blk.1.attn_q.weight", c), TensorType::BF16);
    EXPECT_FALSE(isKnownMix("q9_z"));
    EXPECT_EQ(mixBaseType("Q5_K_M"), TensorType::Q5_K);
}
