// Dequantization with the formulas of ggml's dequantize_row_* (ggml/src/ggml-quants.c):
// same operations in the same order, so values equal llama.cpp's.
#include "kernels/cpu/quant/dequantize.h"

#include "kernels/cpu/quant/quant_blocks.h"

#include <cassert>
#include <cstring>

namespace cw::kernels::quant {
namespace {

void dequantizeQ4_0(const BlockQ4_0* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, y += kQK4_0) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK4_0 / 2; ++j) {
            y[j] = float((x[i].qs[j] & 0x0F) - 8) * d;
            y[j + kQK4_0 / 2] = float((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantizeQ4_1(const BlockQ4_1* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, y += kQK4_1) {
        const float d = fp16ToFp32(x[i].d);
        const float m = fp16ToFp32(x[i].m);
        for (int j = 0; j < kQK4_1 / 2; ++j) {
            y[j] = float(x[i].qs[j] & 0x0F) * d + m;
            y[j + kQK4_1 / 2] = float(x[i].qs[j] >> 4) * d + m;
        }
    }
}

template <typename Block> std::uint32_t highBits(const Block& b)
{
    std::uint32_t qh;
    std::memcpy(&qh, b.qh, sizeof qh);
    return qh;
}

void dequantizeQ5_0(const BlockQ5_0* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, y += kQK5_0) {
        const float d = fp16ToFp32(x[i].d);
        const std::uint32_t qh = highBits(x[i]);
        for (int j = 0; j < kQK5_0 / 2; ++j) {
            const int h0 = int(((qh >> j) << 4) & 0x10);
            const int h1 = int((qh >> (j + 12)) & 0x10);
            y[j] = float(((x[i].qs[j] & 0x0F) | h0) - 16) * d;
            y[j + kQK5_0 / 2] = float(((x[i].qs[j] >> 4) | h1) - 16) * d;
        }
    }
}

void dequantizeQ5_1(const BlockQ5_1* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, y += kQK5_1) {
        const float d = fp16ToFp32(x[i].d);
        const float m = fp16ToFp32(x[i].m);
        const std::uint32_t qh = highBits(x[i]);
        for (int j = 0; j < kQK5_1 / 2; ++j) {
            const int h0 = int(((qh >> j) << 4) & 0x10);
            const int h1 = int((qh >> (j + 12)) & 0x10);
            y[j] = float((x[i].qs[j] & 0x0F) | h0) * d + m;
            y[j + kQK5_1 / 2] = float((x[i].qs[j] >> 4) | h1) * d + m;
        }
    }
}

void dequantizeQ8_0(const BlockQ8_0* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, y += kQK8_0) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK8_0; ++j)
            y[j] = float(x[i].qs[j]) * d;
    }
}

void dequantizeQ2_K(const BlockQ2_K* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float dmin = fp16ToFp32(x[i].dmin);
        const std::uint8_t* q = x[i].qs;
        int is = 0;
        for (int n = 0; n < kQK_K; n += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const std::uint8_t sc = x[i].scales[is++];
                    const float dl = d * float(sc & 0xF);
                    const float ml = dmin * float(sc >> 4);
                    for (int l = 0; l < 16; ++l)
                        *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
                }
            }
            q += 32;
        }
    }
}

// The 16 6-bit scales of Q3_K, unpacked as ggml does (low 4 bits from scales[0..7], high 2
// bits from scales[8..11]); each is used minus 32.
void unpackQ3_KScales(const std::uint8_t* packed, std::int8_t* scales)
{
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (packed[j] & 0xF) : (packed[j - 8] >> 4);
        const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        scales[j] = std::int8_t((low | (high << 4)) - 32);
    }
}

void dequantizeQ3_K(const BlockQ3_K* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i) {
        const float dAll = fp16ToFp32(x[i].d);
        std::int8_t scales[16];
        unpackQ3_KScales(x[i].scales, scales);
        const std::uint8_t* q = x[i].qs;
        const std::uint8_t* hm = x[i].hmask;
        std::uint8_t m = 1;
        int is = 0;
        for (int n = 0; n < kQK_K; n += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const float dl = dAll * float(scales[is++]);
                    for (int l = 16 * half; l < 16 * half + 16; ++l)
                        *y++ = dl * float(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
                }
                m = std::uint8_t(m << 1);
            }
            q += 32;
        }
    }
}

void dequantizeQ4_K(const BlockQ4_K* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float dmin = fp16ToFp32(x[i].dmin);
        const std::uint8_t* q = x[i].qs;
        for (int is = 0; is < 8; is += 2, q += 32) {
            std::uint8_t sc, m;
            scaleMinK4(is, x[i].scales, sc, m);
            const float d1 = d * float(sc), m1 = dmin * float(m);
            scaleMinK4(is + 1, x[i].scales, sc, m);
            const float d2 = d * float(sc), m2 = dmin * float(m);
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * float(q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * float(q[l] >> 4) - m2;
        }
    }
}

void dequantizeQ5_K(const BlockQ5_K* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float dmin = fp16ToFp32(x[i].dmin);
        const std::uint8_t* ql = x[i].qs;
        const std::uint8_t* qh = x[i].qh;
        std::uint8_t u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32) {
            std::uint8_t sc, m;
            scaleMinK4(is, x[i].scales, sc, m);
            const float d1 = d * float(sc), m1 = dmin * float(m);
            scaleMinK4(is + 1, x[i].scales, sc, m);
            const float d2 = d * float(sc), m2 = dmin * float(m);
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * float((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
            u1 = std::uint8_t(u1 << 2);
            u2 = std::uint8_t(u2 << 2);
        }
    }
}

void dequantizeQ6_K(const BlockQ6_K* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const std::uint8_t* ql = x[i].ql;
        const std::uint8_t* qh = x[i].qh;
        const std::int8_t* sc = x[i].scales;
        for (int n = 0; n < kQK_K; n += 128) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * float(sc[is + 0]) * float(q1);
                y[l + 32] = d * float(sc[is + 2]) * float(q2);
                y[l + 64] = d * float(sc[is + 4]) * float(q3);
                y[l + 96] = d * float(sc[is + 6]) * float(q4);
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

void dequantizeIQ4_XS(const BlockIQ4_XS* x, float* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const std::uint8_t* qs = x[i].qs;
        for (int ib = 0; ib < kQK_K / 32; ++ib, y += 32, qs += 16) {
            const int ls = ((x[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF)
                | (((x[i].scales_h >> 2 * ib) & 3) << 4);
            const float dl = d * float(ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * float(kValuesIQ4NL[qs[j] & 0xF]);
                y[j + 16] = dl * float(kValuesIQ4NL[qs[j] >> 4]);
            }
        }
    }
}

} // namespace

void dequantizeRow(TensorType type, const void* src, float* dst, std::int64_t n)
{
    const auto traits = tensorTypeTraits(std::uint32_t(type));
    assert(traits && n % traits->blockSize == 0);
    const std::int64_t nb = n / std::int64_t(traits->blockSize);
    switch (type) {
    case TensorType::F32:
        std::memcpy(dst, src, std::size_t(n) * sizeof(float));
        return;
    case TensorType::F16: {
        const auto* h = static_cast<const std::uint16_t*>(src);
        for (std::int64_t i = 0; i < n; ++i)
            dst[i] = fp16ToFp32(h[i]);
        return;
    }
    case TensorType::BF16: {
        const auto* b = static_cast<const std::uint16_t*>(src);
        for (std::int64_t i = 0; i < n; ++i)
            dst[i] = bf16ToFp32(b[i]);
        return;
    }
    case TensorType::Q4_0:
        return dequantizeQ4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case TensorType::Q4_1:
        return dequantizeQ4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case TensorType::Q5_0:
        return dequantizeQ5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case TensorType::Q5_1:
        return dequantizeQ5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case TensorType::Q8_0:
        return dequantizeQ8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case TensorType::Q2_K:
        return dequantizeQ2_K(static_cast<const BlockQ2_K*>(src), dst, nb);
    case TensorType::Q3_K:
        return dequantizeQ3_K(static_cast<const BlockQ3_K*>(src), dst, nb);
    case TensorType::Q4_K:
        return dequantizeQ4_K(static_cast<const BlockQ4_K*>(src), dst, nb);
    case TensorType::Q5_K:
        return dequantizeQ5_K(static_cast<const BlockQ5_K*>(src), dst, nb);
    case TensorType::Q6_K:
        return dequantizeQ6_K(static_cast<const BlockQ6_K*>(src), dst, nb);
    case TensorType::IQ4_XS:
        return dequantizeIQ4_XS(static_cast<const BlockIQ4_XS*>(src), dst, nb);
    }
    assert(false && "dequantizeRow: unsupported type");
}

} // namespace cw::kernels::quant
