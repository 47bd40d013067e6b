#pragma once

// Integer dot products of the quantized block types with activations quantized on the device
// (the design of llama.cpp's mmvq: int8 activations in blocks of 32 values with an f32 scale,
// __dp4a on the weight quants), for the matrix-vector products of decode.
//
// Why: dequantizing every weight to f32 and multiplying costs ~6 instructions per weight,
// which held the f32 kernels at 0.7-1.3 TB/s. Here the weight quants stay integers: a unit of
// 32 or 64 values is unpacked once into packed int8 words (shared by all token rows), and each
// token row costs one dp4a per 4 values plus a few float multiplies per 32.
//
// Activations (QuantizedRows layout): per token row, `planes` int8 rows of `cols` values
// (plane 1, when present, quantizes what plane 0 left: x ~ d0 q0 + d1 q1, for products that
// need more than int8's ~0.5 % error), then one float4 per 32-value block: {d0, d1, sum of
// the block's f32 values, 0}. The sum serves the weights' mins and offsets exactly.
//
// A unit is the piece of a weight row one thread decodes at a time. Its activations are
// kPieces pieces of kPieceWords int8 words: piece i is block block0 + i of the activations, at
// byte offset `offset` inside that block.

#include "kernels/cuda/quant/chunk_decode.cuh"
#include "kernels/cuda/quant/dequant.cuh"

#include <cstdint>

namespace cw::kernels::cuda::int_dot {

struct XSpan {
    std::int64_t block0; // first activation block
    int offset; // bytes into each block
};

__device__ __forceinline__ int dp4a(std::uint32_t a, std::uint32_t b, int c)
{
    return __dp4a(int(a), int(b), c);
}

// Bits 0..3 of x moved to bit 0 of bytes 0..3 (the four products land on distinct bits, so
// nothing carries).
__device__ __forceinline__ std::uint32_t spreadBits4(std::uint32_t x)
{
    return ((x & 0xFu) * 0x00204081u) & 0x01010101u;
}

// Bytes 0..63 minus 32 on each byte of v, without borrows between bytes.
__device__ __forceinline__ std::uint32_t minus32Bytes(std::uint32_t v)
{
    return ((v | 0x80808080u) - 0x20202020u) ^ 0x80808080u;
}

// Each byte of v (0..15) replaced by ggml's kvalues_iq4nl level, as int8.
__device__ __forceinline__ std::uint32_t iq4nlLevels(std::uint32_t v)
{
    const std::uint32_t y = v | (v >> 4); // byte 0: v0 | v1 << 4, byte 2: v2 | v3 << 4
    const std::uint32_t sel = __byte_perm(y, 0, 0x4420); // nibble k: the index of byte k
    const std::uint32_t low = __byte_perm(0xBFAD9881u, 0xF6EADDCFu, sel & 0x7777u);
    const std::uint32_t high = __byte_perm(0x26190D01u, 0x71594535u, sel & 0x7777u);
    return __byte_perm(low, high, 0x3210u | ((sel & 0x8888u) >> 1));
}

__device__ __forceinline__ float xScale(const float4& s, int plane)
{
    return plane == 0 ? s.x : s.y;
}

template <TensorType Type> struct Unit;

// Q4_0, Q4_1, Q5_0, Q5_1: one block of 32 values per unit.
template <TensorType Type> struct Unit32 {
    static constexpr int kBytes = BlockTraits<Type>::kBytes;
    static constexpr bool kHasMin = Type == TensorType::Q4_1 || Type == TensorType::Q5_1;
    static constexpr bool kHasHigh = Type == TensorType::Q5_0 || Type == TensorType::Q5_1;
    static constexpr int kQsOffset = 2 + (kHasMin ? 2 : 0) + (kHasHigh ? 4 : 0);
    static constexpr int kAlign = kBytes % 8 == 0 ? 8 : kBytes % 4 == 0 ? 4 : 2;
    static constexpr int kValues = 32, kPerBlock = 1, kPieces = 1, kPieceWords = 8;
    std::uint32_t q[8]; // values 4i..4i+3 in word i
    float d, m; // value = d * q + m / sum term: m * sum(x)

    __device__ static XSpan span(std::int64_t u) { return { u, 0 }; }

    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + u * kBytes;
        d = detail::halfBits(detail::loadU16(b));
        std::uint32_t w[4];
        detail::load16<(kQsOffset % kAlign == 0 ? kAlign : 2)>(b + kQsOffset, w);
        std::uint32_t qh = 0;
        if constexpr (kHasHigh) {
            const std::uint8_t* h = b + (kHasMin ? 4 : 2);
            qh = std::uint32_t(detail::loadU16(h)) | (std::uint32_t(detail::loadU16(h + 2)) << 16);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            std::uint32_t lo = w[i] & 0x0F0F0F0Fu, hi = (w[i] >> 4) & 0x0F0F0F0Fu;
            if constexpr (kHasHigh) {
                lo |= spreadBits4(qh >> (4 * i)) << 4;
                hi |= spreadBits4(qh >> (16 + 4 * i)) << 4;
            }
            q[i] = lo;
            q[4 + i] = hi;
        }
        if constexpr (kHasMin)
            m = detail::halfBits(detail::loadU16(b + 2));
        else
            m = -(kHasHigh ? 16.0f : 8.0f) * d; // the offset of the unsigned quants
    }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[8], const float (&dx)[1]) const
    {
        int s = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i)
            s = dp4a(q[i], x[i], s);
        return d * dx[0] * float(s);
    }
    __device__ __forceinline__ float minTerm(const float (&sx)[1]) const
    {
        return m * sx[0];
    }
    // The tensor-core products (mat_mul_int8.cuh) apply each piece's scale and the
    // coefficient of its activation block's sum themselves.
    __device__ __forceinline__ float pieceScale(int) const { return d; }
    __device__ __forceinline__ float pieceMin(int) const { return m; }
};

template <> struct Unit<TensorType::Q4_0> : Unit32<TensorType::Q4_0> {
};
template <> struct Unit<TensorType::Q4_1> : Unit32<TensorType::Q4_1> {
};
template <> struct Unit<TensorType::Q5_0> : Unit32<TensorType::Q5_0> {
};
template <> struct Unit<TensorType::Q5_1> : Unit32<TensorType::Q5_1> {
};

template <> struct Unit<TensorType::Q8_0> {
    static constexpr int kValues = 32, kPerBlock = 1, kPieces = 1, kPieceWords = 8;
    std::uint32_t q[8];
    float d;
    __device__ static XSpan span(std::int64_t u) { return { u, 0 }; }
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + u * 34;
        d = detail::halfBits(detail::loadU16(b));
        detail::load16<2>(b + 2, q);
        detail::load16<2>(b + 18, q + 4);
    }
    __device__ __forceinline__ float pieceScale(int) const { return d; }
    __device__ __forceinline__ float pieceMin(int) const { return 0.0f; }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[8], const float (&dx)[1]) const
    {
        int s = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i)
            s = dp4a(q[i], x[i], s);
        return d * dx[0] * float(s);
    }
    __device__ __forceinline__ float minTerm(const float (&)[1]) const
    {
        return 0.0f;
    }
};

// Q4_K and Q5_K: unit u of a super-block is (c = u / 2, h = u % 2): bytes [16h, 16h + 16) of
// the 32 quant bytes of 64-value group c, whose low nibbles are sub-block 2c and high nibbles
// sub-block 2c + 1 (values 16h.. of each). The h = 0 unit carries both sub-blocks' mins.
template <TensorType Type> struct UnitK45 {
    static constexpr bool kQ5 = Type == TensorType::Q5_K;
    static constexpr int kBytes = kQ5 ? 176 : 144;
    static constexpr int kValues = 32, kPerBlock = 8, kPieces = 2, kPieceWords = 4;
    std::uint32_t q[8]; // words 0..3: sub-block 2c, 4..7: sub-block 2c + 1
    float da, db, ma, mb;
    __device__ static XSpan span(std::int64_t u)
    {
        return { (u >> 3) * 8 + 2 * ((u >> 1) & 3), 16 * int(u & 1) };
    }
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + (u >> 3) * kBytes;
        const int c = int((u >> 1) & 3), h = int(u & 1);
        std::uint32_t w[4];
        detail::load16<16>(b + (kQ5 ? 48 : 16) + 32 * c + 16 * h, w);
        std::uint32_t qh[4] = { 0, 0, 0, 0 };
        if constexpr (kQ5)
            detail::load16<16>(b + 16 + 16 * h, qh);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            q[i] = w[i] & 0x0F0F0F0Fu;
            q[4 + i] = (w[i] >> 4) & 0x0F0F0F0Fu;
            if constexpr (kQ5) {
                q[i] |= ((qh[i] >> (2 * c)) & 0x01010101u) << 4;
                q[4 + i] |= ((qh[i] >> (2 * c + 1)) & 0x01010101u) << 4;
            }
        }
        int sc0, mn0, sc1, mn1;
        detail::scaleMinK4(2 * c, b + 4, sc0, mn0);
        detail::scaleMinK4(2 * c + 1, b + 4, sc1, mn1);
        const float d = detail::halfBits(detail::loadU16(b));
        const float dmin = detail::halfBits(detail::loadU16(b + 2));
        da = d * float(sc0);
        db = d * float(sc1);
        ma = h == 0 ? dmin * float(mn0) : 0.0f;
        mb = h == 0 ? dmin * float(mn1) : 0.0f;
    }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[8], const float (&dx)[2]) const
    {
        int sa = 0, sb = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            sa = dp4a(q[i], x[i], sa);
            sb = dp4a(q[4 + i], x[4 + i], sb);
        }
        return da * dx[0] * float(sa) + db * dx[1] * float(sb);
    }
    __device__ __forceinline__ float minTerm(const float (&sx)[2]) const
    {
        return -(ma * sx[0] + mb * sx[1]);
    }
    __device__ __forceinline__ float pieceScale(int i) const { return i == 0 ? da : db; }
    __device__ __forceinline__ float pieceMin(int i) const { return i == 0 ? -ma : -mb; }
};

template <> struct Unit<TensorType::Q4_K> : UnitK45<TensorType::Q4_K> {
};
template <> struct Unit<TensorType::Q5_K> : UnitK45<TensorType::Q5_K> {
};

// The 128-value halves of Q2_K, Q3_K and Q6_K hold four 32-value groups j (activation blocks
// 4n + j) that share their bytes; unit u of a super-block is (n = u / 2, h = u % 2): values
// [16h, 16h + 16) of each of the four groups, each group 16 values with its own scale.
__device__ __forceinline__ XSpan spanOfQuarter(std::int64_t u)
{
    return { (u >> 2) * 8 + 4 * ((u >> 1) & 1), 16 * int(u & 1) };
}

template <> struct Unit<TensorType::Q2_K> {
    static constexpr int kValues = 64, kPerBlock = 4, kPieces = 4, kPieceWords = 4;
    std::uint32_t q[16]; // group j in words 4j..4j+3
    float dl[4], ml[4];
    __device__ static XSpan span(std::int64_t u) { return spanOfQuarter(u); }
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + (u >> 2) * 84;
        const int n = int((u >> 1) & 1), h = int(u & 1);
        std::uint32_t w[4];
        detail::load16<4>(b + 16 + 32 * n + 16 * h, w);
        const float d = detail::halfBits(detail::loadU16(b + 80));
        const float dmin = detail::halfBits(detail::loadU16(b + 82));
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int sc = b[8 * n + 2 * j + h];
            dl[j] = d * float(sc & 0xF);
            ml[j] = dmin * float(sc >> 4);
#pragma unroll
            for (int i = 0; i < 4; ++i)
                q[4 * j + i] = (w[i] >> (2 * j)) & 0x03030303u;
        }
    }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[16], const float (&dx)[4]) const
    {
        float r = 0.0f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            int s = 0, sx = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                s = dp4a(q[4 * j + i], x[4 * j + i], s);
                sx = dp4a(0x01010101u, x[4 * j + i], sx);
            }
            r += dx[j] * (dl[j] * float(s) - ml[j] * float(sx));
        }
        return r;
    }
    __device__ __forceinline__ float minTerm(const float (&)[4]) const
    {
        return 0.0f;
    }
};

template <> struct Unit<TensorType::Q3_K> {
    static constexpr int kValues = 64, kPerBlock = 4, kPieces = 4, kPieceWords = 4;
    std::uint32_t q[16]; // signed int8: q2 - 4 where the high bit is clear
    float dl[4];
    __device__ static XSpan span(std::int64_t u) { return spanOfQuarter(u); }
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + (u >> 2) * 110;
        const int n = int((u >> 1) & 1), h = int(u & 1);
        std::uint32_t w[4], hm[4];
        detail::load16<2>(b + 32 + 32 * n + 16 * h, w);
        detail::load16<2>(b + 16 * h, hm);
        const float d = detail::halfBits(detail::loadU16(b + 108));
        const std::uint8_t* packed = b + 96;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int is = 8 * n + 2 * j + h;
            const int low = is < 8 ? (packed[is] & 0xF) : (packed[is - 8] >> 4);
            const int high = (packed[8 + (is & 3)] >> (2 * (is >> 2))) & 3;
            dl[j] = d * float((low | (high << 4)) - 32);
#pragma unroll
            for (int i = 0; i < 4; ++i)
                q[4 * j + i] = ((w[i] >> (2 * j)) & 0x03030303u)
                    | (((~(hm[i] >> (4 * n + j))) & 0x01010101u) * 0xFCu);
        }
    }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[16], const float (&dx)[4]) const
    {
        float r = 0.0f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            int s = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i)
                s = dp4a(q[4 * j + i], x[4 * j + i], s);
            r += dx[j] * dl[j] * float(s);
        }
        return r;
    }
    __device__ __forceinline__ float minTerm(const float (&)[4]) const
    {
        return 0.0f;
    }
    __device__ __forceinline__ float pieceScale(int i) const { return dl[i]; }
    __device__ __forceinline__ float pieceMin(int) const { return 0.0f; }
};

template <> struct Unit<TensorType::Q6_K> {
    static constexpr int kValues = 64, kPerBlock = 4, kPieces = 4, kPieceWords = 4;
    std::uint32_t q[16]; // signed int8 (q - 32)
    float dl[4];
    __device__ static XSpan span(std::int64_t u) { return spanOfQuarter(u); }
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + (u >> 2) * 210;
        const int n = int((u >> 1) & 1), h = int(u & 1);
        std::uint32_t la[4], lb[4], qh[4];
        detail::load16<2>(b + 64 * n + 16 * h, la); // groups 0 (low nibbles) and 2 (high)
        detail::load16<2>(b + 64 * n + 32 + 16 * h, lb); // groups 1 and 3
        detail::load16<2>(b + 128 + 32 * n + 16 * h, qh);
        const float d = detail::halfBits(detail::loadU16(b + 208));
#pragma unroll
        for (int k = 0; k < 4; ++k)
            dl[k] = d * float(std::int8_t(b[192 + 8 * n + 2 * k + h]));
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const std::uint32_t hi0 = (qh[i] & 0x03030303u) << 4;
            const std::uint32_t hi1 = ((qh[i] >> 2) & 0x03030303u) << 4;
            const std::uint32_t hi2 = ((qh[i] >> 4) & 0x03030303u) << 4;
            const std::uint32_t hi3 = ((qh[i] >> 6) & 0x03030303u) << 4;
            q[i] = minus32Bytes((la[i] & 0x0F0F0F0Fu) | hi0);
            q[4 + i] = minus32Bytes((lb[i] & 0x0F0F0F0Fu) | hi1);
            q[8 + i] = minus32Bytes(((la[i] >> 4) & 0x0F0F0F0Fu) | hi2);
            q[12 + i] = minus32Bytes(((lb[i] >> 4) & 0x0F0F0F0Fu) | hi3);
        }
    }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[16], const float (&dx)[4]) const
    {
        float r = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            int s = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i)
                s = dp4a(q[4 * k + i], x[4 * k + i], s);
            r += dx[k] * dl[k] * float(s);
        }
        return r;
    }
    __device__ __forceinline__ float minTerm(const float (&)[4]) const
    {
        return 0.0f;
    }
    __device__ __forceinline__ float pieceScale(int i) const { return dl[i]; }
    __device__ __forceinline__ float pieceMin(int) const { return 0.0f; }
};

template <> struct Unit<TensorType::IQ4_XS> {
    static constexpr int kValues = 32, kPerBlock = 8, kPieces = 1, kPieceWords = 8;
    std::uint32_t q[8];
    float dl;
    __device__ static XSpan span(std::int64_t u) { return { u, 0 }; }
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t u)
    {
        const std::uint8_t* b = row + (u >> 3) * 136;
        const int ib = int(u & 7);
        const int scalesH = detail::loadU16(b + 2);
        const int ls
            = ((b[4 + (ib >> 1)] >> (4 * (ib & 1))) & 0xF) | (((scalesH >> (2 * ib)) & 3) << 4);
        dl = detail::halfBits(detail::loadU16(b)) * float(ls - 32);
        std::uint32_t w[4];
        detail::load16<8>(b + 8 + 16 * ib, w);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            q[i] = iq4nlLevels(w[i] & 0x0F0F0F0Fu);
            q[4 + i] = iq4nlLevels((w[i] >> 4) & 0x0F0F0F0Fu);
        }
    }
    __device__ __forceinline__ float dot(const std::uint32_t (&x)[8], const float (&dx)[1]) const
    {
        int s = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i)
            s = dp4a(q[i], x[i], s);
        return dl * dx[0] * float(s);
    }
    __device__ __forceinline__ float minTerm(const float (&)[1]) const
    {
        return 0.0f;
    }
    __device__ __forceinline__ float pieceScale(int) const { return dl; }
    __device__ __forceinline__ float pieceMin(int) const { return 0.0f; }
};

// The block types the integer products serve (F32/F16/BF16 keep their float kernels).
template <TensorType Type> constexpr bool kHasUnit = BlockTraits<Type>::kValues >= 32;
// ... and the tensor-core products of 9..kIntMatMulMaxTokens rows: every one but Q2_K, whose
// mins multiply each 16-value piece's integer sum rather than its block's float sum.
template <TensorType Type>
constexpr bool kHasMmaUnit = kHasUnit<Type> && Type != TensorType::Q2_K;

constexpr __host__ __device__ int unitValues(TensorType type)
{
    return type == TensorType::Q2_K || type == TensorType::Q3_K || type == TensorType::Q6_K ? 64
                                                                                            : 32;
}

// One token row's activations at unit span s, plane p: the int8 words and the block scales.
template <TensorType Type, int Planes> struct XWords {
    static constexpr int kPieces = Unit<Type>::kPieces, kPieceWords = Unit<Type>::kPieceWords;
    static constexpr int kWords = kPieces * kPieceWords;

    // q: the token row's planes (plane p at q + p * cols); s: its block scales.
    __device__ __forceinline__ static void loadScales(
        const float4* __restrict__ s, XSpan span, float (&d)[Planes][kPieces], float (&sx)[kPieces])
    {
#pragma unroll
        for (int i = 0; i < kPieces; ++i) {
            const float4 v = __ldg(s + span.block0 + i);
            d[0][i] = v.x;
            if constexpr (Planes > 1)
                d[1][i] = v.y;
            sx[i] = v.z;
        }
    }
    __device__ __forceinline__ static void loadWords(
        const std::int8_t* __restrict__ plane, XSpan span, std::uint32_t (&w)[kWords])
    {
#pragma unroll
        for (int i = 0; i < kPieces; ++i) {
            const std::int8_t* p = plane + 32 * (span.block0 + i) + span.offset;
#pragma unroll
            for (int j = 0; j < kPieceWords; j += 4) {
                const int4 v = __ldg(reinterpret_cast<const int4*>(p) + j / 4);
                w[i * kPieceWords + j] = std::uint32_t(v.x);
                w[i * kPieceWords + j + 1] = std::uint32_t(v.y);
                w[i * kPieceWords + j + 2] = std::uint32_t(v.z);
                w[i * kPieceWords + j + 3] = std::uint32_t(v.w);
            }
        }
    }
};

} // namespace cw::kernels::cuda::int_dot
