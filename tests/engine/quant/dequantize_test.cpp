// Dequantization checked against hand-worked blocks and against an element-by-element reading
// of ggml's block layouts (ggml-common.h / ggml-quants.c), written independently of the
// kernels' loop structure: for every element e the test says which byte, which bits and which
// scale it comes from.
#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/quant_blocks.h"
#include "quant_test_blocks.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

using namespace cw::kernels::quant;
using cw::kernels::TensorType;

namespace {

float h(Half v)
{
    return fp16ToFp32(v);
}

// 6-bit scale / min j of the Q4_K/Q5_K packing, read bit by bit from the layout description:
// scales[0..3] hold scale 0..3 in bits 0-5 and the top 2 bits of scale 4..7 in bits 6-7;
// scales[4..7] hold min 0..3 (bits 0-5) and the top bits of min 4..7; scales[8..11] hold the
// low 4 bits of scale 4..7 (low nibble) and min 4..7 (high nibble).
int k4Scale(const std::uint8_t* s, int j)
{
    return j < 4 ? (s[j] & 0x3F) : ((s[8 + j - 4] & 0x0F) | ((s[j - 4] >> 6) << 4));
}
int k4Min(const std::uint8_t* s, int j)
{
    return j < 4 ? (s[4 + j] & 0x3F) : ((s[8 + j - 4] >> 4) | ((s[4 + j - 4] >> 6) << 4));
}

// Q3_K's 16 6-bit scales: low nibbles in scales[0..7] (scale i < 8: low nibble of byte i,
// i >= 8: high nibble of byte i-8), top 2 bits in scales[8..11] (byte 8 + i%4, bits 2*(i/4)).
int q3Scale(const std::uint8_t* s, int i)
{
    const int low = i < 8 ? (s[i] & 0xF) : (s[i - 8] >> 4);
    const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    return (low | (high << 4)) - 32;
}

using ElementFn = std::function<float(const std::uint8_t* block, int e)>;

struct Layout {
    TensorType type;
    ElementFn element;
};

float elementQ4_0(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ4_0*>(p);
    const int q = e < 16 ? (b.qs[e] & 0xF) : (b.qs[e - 16] >> 4);
    return float(q - 8) * h(b.d);
}
float elementQ4_1(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ4_1*>(p);
    const int q = e < 16 ? (b.qs[e] & 0xF) : (b.qs[e - 16] >> 4);
    return float(q) * h(b.d) + h(b.m);
}
int fifthBit(const std::uint8_t* qh, int e)
{
    return (qh[e / 8] >> (e % 8)) & 1;
}
float elementQ5_0(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ5_0*>(p);
    const int q = (e < 16 ? (b.qs[e] & 0xF) : (b.qs[e - 16] >> 4)) | (fifthBit(b.qh, e) << 4);
    return float(q - 16) * h(b.d);
}
float elementQ5_1(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ5_1*>(p);
    const int q = (e < 16 ? (b.qs[e] & 0xF) : (b.qs[e - 16] >> 4)) | (fifthBit(b.qh, e) << 4);
    return float(q) * h(b.d) + h(b.m);
}
float elementQ8_0(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ8_0*>(p);
    return float(b.qs[e]) * h(b.d);
}
float elementQ2_K(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ2_K*>(p);
    const int half = e / 128, group = (e % 128) / 32, l = e % 32;
    const int q = (b.qs[32 * half + l] >> (2 * group)) & 3;
    const int sc = b.scales[8 * half + 2 * group + (l >= 16)];
    return h(b.d) * float(sc & 0xF) * float(q) - h(b.dmin) * float(sc >> 4);
}
float elementQ3_K(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ3_K*>(p);
    const int half = e / 128, group = (e % 128) / 32, l = e % 32;
    const int low = (b.qs[32 * half + l] >> (2 * group)) & 3;
    const bool highSet = (b.hmask[l] >> (4 * half + group)) & 1;
    const int scale = q3Scale(b.scales, 8 * half + 2 * group + (l >= 16));
    return h(b.d) * float(scale) * float(low - (highSet ? 0 : 4));
}
float elementQ4_K(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ4_K*>(p);
    const int chunk = e / 64, w = e % 64, sub = 2 * chunk + (w >= 32);
    const std::uint8_t byte = b.qs[32 * chunk + w % 32];
    const int q = w < 32 ? (byte & 0xF) : (byte >> 4);
    return h(b.d) * float(k4Scale(b.scales, sub)) * float(q)
        - h(b.dmin) * float(k4Min(b.scales, sub));
}
float elementQ5_K(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ5_K*>(p);
    const int chunk = e / 64, w = e % 64, sub = 2 * chunk + (w >= 32);
    const std::uint8_t byte = b.qs[32 * chunk + w % 32];
    const int q = (w < 32 ? (byte & 0xF) : (byte >> 4)) + 16 * ((b.qh[w % 32] >> sub) & 1);
    return h(b.d) * float(k4Scale(b.scales, sub)) * float(q)
        - h(b.dmin) * float(k4Min(b.scales, sub));
}
float elementQ6_K(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockQ6_K*>(p);
    const int half = e / 128, quarter = (e % 128) / 32, l = e % 32;
    const std::uint8_t lowByte = b.ql[64 * half + 32 * (quarter & 1) + l];
    const int low = quarter < 2 ? (lowByte & 0xF) : (lowByte >> 4);
    const int high = (b.qh[32 * half + l] >> (2 * quarter)) & 3;
    const int scale = b.scales[8 * half + 2 * quarter + l / 16];
    return h(b.d) * float(scale) * float((low | (high << 4)) - 32);
}
float elementIQ4_XS(const std::uint8_t* p, int e)
{
    const auto& b = *reinterpret_cast<const BlockIQ4_XS*>(p);
    const int sub = e / 32, w = e % 32;
    const std::uint8_t byte = b.qs[16 * sub + w % 16];
    const int index = w < 16 ? (byte & 0xF) : (byte >> 4);
    const int ls
        = ((b.scales_l[sub / 2] >> (4 * (sub % 2))) & 0xF) | (((b.scales_h >> (2 * sub)) & 3) << 4);
    return h(b.d) * float(ls - 32) * float(kValuesIQ4NL[index]);
}

const Layout kLayouts[] = {
    { TensorType::Q4_0, elementQ4_0 },
    { TensorType::Q4_1, elementQ4_1 },
    { TensorType::Q5_0, elementQ5_0 },
    { TensorType::Q5_1, elementQ5_1 },
    { TensorType::Q8_0, elementQ8_0 },
    { TensorType::Q2_K, elementQ2_K },
    { TensorType::Q3_K, elementQ3_K },
    { TensorType::Q4_K, elementQ4_K },
    { TensorType::Q5_K, elementQ5_K },
    { TensorType::Q6_K, elementQ6_K },
    { TensorType::IQ4_XS, elementIQ4_XS },
};

} // namespace

TEST(Dequantize, halfPrecisionConversionsAreExact)
{
    EXPECT_EQ(fp16ToFp32(0x3C00), 1.0f);
    EXPECT_EQ(fp16ToFp32(0xC000), -2.0f);
    EXPECT_EQ(fp16ToFp32(0x3555), 0.333251953125f);
    EXPECT_EQ(fp16ToFp32(0x7BFF), 65504.0f);
    EXPECT_EQ(fp16ToFp32(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
    EXPECT_EQ(fp16ToFp32(0x03FF), std::ldexp(1023.0f, -24)); // largest subnormal
    EXPECT_TRUE(std::isinf(fp16ToFp32(0x7C00)));
    EXPECT_TRUE(std::isnan(fp16ToFp32(0x7E00)));
    EXPECT_EQ(fp32ToFp16(1.0f), 0x3C00);
    EXPECT_EQ(fp32ToFp16(0.1f), 0x2E66); // round to nearest even
    EXPECT_EQ(fp32ToFp16(70000.0f), 0x7C00); // overflow to infinity
    EXPECT_EQ(fp32ToFp16(std::ldexp(1.0f, -25) * 1.5f), 0x0001); // rounds up into a subnormal
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const float f = fp16ToFp32(Half(bits));
        if (!std::isnan(f)) {
            ASSERT_EQ(fp32ToFp16(f), bits) << std::hex << bits;
        }
    }
    EXPECT_EQ(bf16ToFp32(0x3F80), 1.0f);
    EXPECT_EQ(bf16ToFp32(0xC040), -3.0f);
    EXPECT_EQ(fp32ToBf16(1.00390625f), 0x3F80); // tie rounds to even
    EXPECT_EQ(fp32ToBf16(1.01171875f), 0x3F82); // tie rounds to even (up)
}

TEST(Dequantize, plainFloatTypes)
{
    const float f32[3] = { 1.5f, -2.25f, 0.0f };
    float out[3];
    dequantizeRow(TensorType::F32, f32, out, 3);
    EXPECT_EQ(std::memcmp(out, f32, sizeof f32), 0);
    const std::uint16_t f16[3] = { 0x3C00, 0xC100, 0x3800 };
    dequantizeRow(TensorType::F16, f16, out, 3);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -2.5f);
    EXPECT_EQ(out[2], 0.5f);
    const std::uint16_t bf16[3] = { 0x3F80, 0xC020, 0x4049 };
    dequantizeRow(TensorType::BF16, bf16, out, 3);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -2.5f);
    EXPECT_EQ(out[2], 3.140625f);
}

TEST(Dequantize, handWorkedQ8_0Block)
{
    BlockQ8_0 b {};
    b.d = 0x3800; // 0.5
    for (int j = 0; j < 32; ++j)
        b.qs[j] = std::int8_t(j - 16);
    float y[32];
    dequantizeRow(TensorType::Q8_0, &b, y, 32);
    EXPECT_EQ(y[0], -8.0f);
    EXPECT_EQ(y[16], 0.0f);
    EXPECT_EQ(y[31], 7.5f);
}

TEST(Dequantize, handWorkedQ4_0AndQ4_1Blocks)
{
    BlockQ4_0 b {};
    b.d = 0x3400; // 0.25
    b.qs[0] = 0xF0; // element 0: 0 -> -8*0.25, element 16: 15 -> 7*0.25
    b.qs[3] = 0x89;
    float y[32];
    dequantizeRow(TensorType::Q4_0, &b, y, 32);
    EXPECT_EQ(y[0], -2.0f);
    EXPECT_EQ(y[16], 1.75f);
    EXPECT_EQ(y[3], 0.25f);
    EXPECT_EQ(y[19], 0.0f);
    EXPECT_EQ(y[1], -2.0f);

    BlockQ4_1 c {};
    c.d = 0x3800; // 0.5
    c.m = 0xBC00; // -1
    c.qs[0] = 0x3A;
    dequantizeRow(TensorType::Q4_1, &c, y, 32);
    EXPECT_EQ(y[0], 4.0f); // 10*0.5 - 1
    EXPECT_EQ(y[16], 0.5f); // 3*0.5 - 1
    EXPECT_EQ(y[1], -1.0f);
}

TEST(Dequantize, handWorkedQ5Blocks)
{
    BlockQ5_0 b {};
    b.d = 0x3C00; // 1
    b.qs[2] = 0x1F; // element 2: low 15, element 18: low 1
    const std::uint32_t qh = (1u << 2) | (1u << 18); // both get the fifth bit
    std::memcpy(b.qh, &qh, 4);
    float y[32];
    dequantizeRow(TensorType::Q5_0, &b, y, 32);
    EXPECT_EQ(y[2], 15.0f); // 31 - 16
    EXPECT_EQ(y[18], 1.0f); // 17 - 16
    EXPECT_EQ(y[0], -16.0f);

    BlockQ5_1 c {};
    c.d = 0x3800; // 0.5
    c.m = 0x4000; // 2
    c.qs[31 - 16] = 0x70; // element 31: low 7
    const std::uint32_t qh1 = 1u << 31;
    std::memcpy(c.qh, &qh1, 4);
    dequantizeRow(TensorType::Q5_1, &c, y, 32);
    EXPECT_EQ(y[31], 13.5f); // 23*0.5 + 2
    EXPECT_EQ(y[15], 2.0f);
}

TEST(Dequantize, handWorkedQ4_KBlock)
{
    BlockQ4_K b {};
    b.d = 0x3C00; // 1
    b.dmin = 0x3800; // 0.5
    // sub-block 0: scale 3, min 2; sub-block 5: scale 33 (uses the high bits), min 17.
    b.scales[0] = 3;
    b.scales[4] = 2;
    b.scales[9] = std::uint8_t((33 & 0xF) | ((17 & 0xF) << 4));
    b.scales[1] |= std::uint8_t((33 >> 4) << 6);
    b.scales[5] |= std::uint8_t((17 >> 4) << 6);
    b.qs[0] = 0x07; // element 0: q 7
    b.qs[64 + 5] = 0x90; // element 128+32+5 (sub-block 5): q 9
    float y[256];
    dequantizeRow(TensorType::Q4_K, &b, y, 256);
    EXPECT_EQ(y[0], 3.0f * 7 - 1.0f);
    EXPECT_EQ(y[165], 33.0f * 9 - 8.5f);
    EXPECT_EQ(y[1], -1.0f);
    std::uint8_t sc, m;
    scaleMinK4(5, b.scales, sc, m);
    EXPECT_EQ(sc, 33);
    EXPECT_EQ(m, 17);
}

TEST(Dequantize, handWorkedQ6_KBlock)
{
    BlockQ6_K b {};
    b.d = 0x3800; // 0.5
    b.scales[0] = 2;
    b.scales[8 + 2 * 3 + 1] = -4; // second half, fourth quarter, elements 16..31 of it
    b.ql[0] = 0x05; // element 0: low 5
    b.qh[0] = 0x02; // element 0: high 2 -> q = 37 - 32 = 5
    b.ql[64 + 32 + 20] = 0xA0; // element 128+96+20: low 10 (high nibble, fourth quarter)
    b.qh[32 + 20] = 0xC0; // high bits 3 -> q = 58 - 32 = 26
    float y[256];
    dequantizeRow(TensorType::Q6_K, &b, y, 256);
    EXPECT_EQ(y[0], 0.5f * 2 * 5);
    EXPECT_EQ(y[244], 0.5f * -4 * 26);
}

TEST(Dequantize, handWorkedQ3_KAndQ2_KBlocks)
{
    BlockQ3_K b {};
    b.d = 0x3C00;
    // scale 0 = 40-32 = 8: low nibble 8, high bits 2
    b.scales[0] = 0x08;
    b.scales[8] = 0x02;
    b.qs[0] = 0x03; // element 0: low bits 3, hmask clear -> 3-4 = -1
    b.hmask[1] = 0x01; // element 1: high bit set, low bits 0 -> 0
    float y[256];
    dequantizeRow(TensorType::Q3_K, &b, y, 256);
    EXPECT_EQ(y[0], -8.0f);
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_EQ(y[2], -32.0f); // low 0, no high bit: 8 * -4

    BlockQ2_K c {};
    c.d = 0x4000; // 2
    c.dmin = 0x3C00; // 1
    c.scales[3] = 0x53; // scale 3, min 5 for elements 48..63
    c.qs[16] = 0x0C; // element 32+16 = 48: (byte 16 >> 2) & 3 = 3
    dequantizeRow(TensorType::Q2_K, &c, y, 256);
    EXPECT_EQ(y[48], 2.0f * 3 * 3 - 5.0f);
    EXPECT_EQ(y[49], -5.0f);
}

TEST(Dequantize, handWorkedIQ4_XSBlock)
{
    BlockIQ4_XS b {};
    b.d = 0x3C00; // 1
    // sub-block 3: ls = 0x5 | (2 << 4) = 37 -> 5
    b.scales_l[1] = 0x50;
    b.scales_h = std::uint16_t(2 << 6);
    b.qs[48] = 0xF0; // element 96: index 0 (-127); element 112: index 15 (113)
    float y[256];
    dequantizeRow(TensorType::IQ4_XS, &b, y, 256);
    EXPECT_EQ(y[96], 5.0f * -127);
    EXPECT_EQ(y[112], 5.0f * 113);
    EXPECT_EQ(y[0], -32.0f * -127); // ls 0 -> -32
}

TEST(Dequantize, everyTypeMatchesTheElementwiseLayoutOnRandomBlocks)
{
    std::mt19937 rng(7);
    for (const auto& layout : kLayouts) {
        const auto traits = *cw::kernels::tensorTypeTraits(std::uint32_t(layout.type));
        const int blocks = 5;
        const auto data = cw::test::randomBlocks(layout.type, blocks, rng);
        std::vector<float> y(std::size_t(blocks) * traits.blockSize);
        dequantizeRow(layout.type, data.data(), y.data(), std::int64_t(y.size()));
        for (int i = 0; i < blocks; ++i) {
            for (int e = 0; e < int(traits.blockSize); ++e) {
                ASSERT_EQ(y[std::size_t(i) * traits.blockSize + e],
                    layout.element(data.data() + i * traits.blockBytes, e))
                    << traits.name << " block " << i << " element " << e;
            }
        }
    }
}
