#pragma once

// Quantized block layouts exactly as ggml defines them (ggml/src/ggml-common.h), so a block
// read from a GGUF file is used in place. Half-precision fields are stored as raw uint16_t
// bits; use fp16ToFp32/bf16ToFp32 to read them.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cw::kernels::quant {

constexpr int kQK4_0 = 32;
constexpr int kQK4_1 = 32;
constexpr int kQK5_0 = 32;
constexpr int kQK5_1 = 32;
constexpr int kQK8_0 = 32;
constexpr int kQK_K = 256; // super-block size of the k-quants and IQ4_XS
constexpr int kKScaleSize = 12; // packed 6-bit scales/mins of Q4_K and Q5_K

using Half = std::uint16_t; // IEEE binary16 bits (ggml_half)

struct BlockQ4_0 {
    Half d; // delta
    std::uint8_t qs[kQK4_0 / 2]; // nibbles: low nibble element j, high nibble element j+16
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ4_1 {
    Half d; // delta
    Half m; // min
    std::uint8_t qs[kQK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
    Half d;
    std::uint8_t qh[4]; // 5th bit of each of the 32 elements (little-endian uint32)
    std::uint8_t qs[kQK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
    Half d;
    Half m;
    std::uint8_t qh[4];
    std::uint8_t qs[kQK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

struct BlockQ8_0 {
    Half d;
    std::int8_t qs[kQK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34);

// 2.625 bits per weight: 16 sub-blocks of 16, 4-bit scale and 4-bit min each.
struct BlockQ2_K {
    std::uint8_t scales[kQK_K / 16]; // low nibble scale, high nibble min
    std::uint8_t qs[kQK_K / 4]; // 2-bit quants
    Half d; // super-block scale for the scales
    Half dmin; // super-block scale for the mins
};
static_assert(sizeof(BlockQ2_K) == 2 * 2 + kQK_K / 16 + kQK_K / 4);

// 3.4375 bits per weight: 16 sub-blocks of 16, 6-bit scales.
struct BlockQ3_K {
    std::uint8_t hmask[kQK_K / 8]; // high bit of each quant (set: no subtraction of 4)
    std::uint8_t qs[kQK_K / 4]; // low 2 bits
    std::uint8_t scales[12]; // 16 scales of 6 bits, packed
    Half d;
};
static_assert(sizeof(BlockQ3_K) == 2 + kQK_K / 4 + kQK_K / 8 + 12);

// 4.5 bits per weight: 8 sub-blocks of 32, 6-bit scale and min each.
struct BlockQ4_K {
    Half d;
    Half dmin;
    std::uint8_t scales[kKScaleSize];
    std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 2 * 2 + kKScaleSize + kQK_K / 2);

// 5.5 bits per weight.
struct BlockQ5_K {
    Half d;
    Half dmin;
    std::uint8_t scales[kKScaleSize];
    std::uint8_t qh[kQK_K / 8];
    std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 2 * 2 + kKScaleSize + kQK_K / 2 + kQK_K / 8);

// 6.5625 bits per weight: 16 sub-blocks of 16, 8-bit signed scales.
struct BlockQ6_K {
    std::uint8_t ql[kQK_K / 2]; // low 4 bits
    std::uint8_t qh[kQK_K / 4]; // high 2 bits
    std::int8_t scales[kQK_K / 16];
    Half d;
};
static_assert(sizeof(BlockQ6_K) == 2 + kQK_K / 16 + 3 * kQK_K / 4);

// 4.25 bits per weight: 8 sub-blocks of 32 with 6-bit scales, non-linear 4-bit grid.
struct BlockIQ4_XS {
    Half d;
    std::uint16_t scales_h; // high 2 bits of the 8 scales
    std::uint8_t scales_l[kQK_K / 64]; // low 4 bits of the 8 scales
    std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 2 + 2 + kQK_K / 64 + kQK_K / 2);

// The 16 non-linear levels of IQ4_NL / IQ4_XS (ggml's kvalues_iq4nl).
inline constexpr std::int8_t kValuesIQ4NL[16]
    = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

// The 6-bit scale and min of sub-block j (0..7) of Q4_K/Q5_K (ggml's get_scale_min_k4):
// j < 4: low 6 bits of scales[j] and scales[j+4]; j >= 4: low nibble / high nibble of
// scales[j+4] with the top 2 bits of scales[j-4] / scales[j].
inline void scaleMinK4(int j, const std::uint8_t* q, std::uint8_t& scale, std::uint8_t& min)
{
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = std::uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        min = std::uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// binary16 <-> binary32 (round to nearest even; NaN and infinities preserved).
inline float fp16ToFp32(Half h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1fu;
    std::uint32_t mantissa = h & 0x3ffu;
    std::uint32_t bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;
    } else { // subnormal: normalise
        exponent = 113;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            --exponent;
        }
        bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Round to nearest even, overflow to infinity, NaN kept (as F16C's vcvtps2ph).
inline Half fp32ToFp16(float f)
{
    std::uint32_t w;
    std::memcpy(&w, &f, 4);
    const std::uint32_t sign = w & 0x80000000u;
    const std::uint32_t twice = w + w;
    if (twice > 0xff000000u) // NaN
        return Half((sign >> 16) | 0x7e00u);
    // Scaling up then down lets the FPU do the rounding of the mantissa to 10 bits.
    float magnitude = std::fabs(f) * 0x1.0p+112f * 0x1.0p-110f;
    std::uint32_t bias = twice & 0xff000000u;
    if (bias < 0x71000000u)
        bias = 0x71000000u;
    const std::uint32_t biasBits = (bias >> 1) + 0x07800000u;
    float biasFloat;
    std::memcpy(&biasFloat, &biasBits, 4);
    magnitude += biasFloat;
    std::uint32_t bits;
    std::memcpy(&bits, &magnitude, 4);
    const std::uint32_t exponentBits = (bits >> 13) & 0x00007c00u;
    const std::uint32_t mantissaBits = bits & 0x00000fffu;
    return Half((sign >> 16) | (exponentBits + mantissaBits));
}

inline float bf16ToFp32(std::uint16_t b)
{
    const std::uint32_t bits = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Round to nearest even, NaN kept quiet (as ggml_compute_fp32_to_bf16).
inline std::uint16_t fp32ToBf16(float f)
{
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return std::uint16_t((bits >> 16) | 64u);
    return std::uint16_t((bits + (0x7fffu + ((bits >> 16) & 1u))) >> 16);
}

} // namespace cw::kernels::quant
