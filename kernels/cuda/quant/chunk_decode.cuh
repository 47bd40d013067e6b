#pragma once

// Decoding of the quantized block types 32 values (one chunk) at a time, for the hot loops:
// load() reads a chunk's bytes once and works out its scales, piece(p) then yields values
// [8p, 8p + 8) of the chunk from registers. Chunk c of a row is values [32c, 32c + 32): one
// block of the 32-value types, one eighth of a super-block of the k-quants and IQ4_XS.
//
// With Exact = true every value is bit for bit the CPU's dequantizeRow (rounded products, no
// FMA contraction), as dequant8; Exact = false lets nvcc fuse d * q - m into one FMA, which
// the matrix-vector products use (the values then differ from the CPU's by one rounding).
// Row pointers must be aligned as dequant.cuh says.

#include "kernels/cuda/quant/dequant.cuh"

namespace cw::kernels::cuda {

namespace detail {

template <bool Exact> __device__ __forceinline__ float mulOp(float a, float b)
{
    if constexpr (Exact)
        return __fmul_rn(a, b);
    else
        return a * b;
}

template <bool Exact> __device__ __forceinline__ float mulSubOp(float a, float b, float c)
{
    if constexpr (Exact)
        return __fsub_rn(__fmul_rn(a, b), c);
    else
        return a * b - c;
}

template <bool Exact> __device__ __forceinline__ float mulAddOp(float a, float b, float c)
{
    if constexpr (Exact)
        return __fadd_rn(__fmul_rn(a, b), c);
    else
        return a * b + c;
}

// Sixteen bytes at p (aligned to Align: 2, 4, 8 or 16) into q[0..3].
template <int Align> __device__ __forceinline__ void load16(const std::uint8_t* p, std::uint32_t* q)
{
    if constexpr (Align >= 16) {
        const uint4 v = *reinterpret_cast<const uint4*>(p);
        q[0] = v.x, q[1] = v.y, q[2] = v.z, q[3] = v.w;
    } else if constexpr (Align >= 8) {
        const uint2 a = reinterpret_cast<const uint2*>(p)[0];
        const uint2 b = reinterpret_cast<const uint2*>(p)[1];
        q[0] = a.x, q[1] = a.y, q[2] = b.x, q[3] = b.y;
    } else if constexpr (Align >= 4) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
            q[i] = reinterpret_cast<const std::uint32_t*>(p)[i];
    } else {
        const auto* h = reinterpret_cast<const std::uint16_t*>(p);
#pragma unroll
        for (int i = 0; i < 4; ++i)
            q[i] = std::uint32_t(h[2 * i]) | (std::uint32_t(h[2 * i + 1]) << 16);
    }
}

// N words from a 2-byte aligned p: N + 1 aligned 4-byte loads, realigned by funnel shifts (a
// quarter of the loads of 2-byte units; the last word may read up to 2 bytes past p + 4N,
// which the callers' blocks hold).
template <int N>
__device__ __forceinline__ void loadWordsAligned2(const std::uint8_t* p, std::uint32_t* q)
{
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    const auto* w = reinterpret_cast<const std::uint32_t*>(address & ~std::uintptr_t(3));
    const unsigned shift = unsigned(address & 3) * 8;
    std::uint32_t u[N + 1];
#pragma unroll
    for (int i = 0; i <= N; ++i)
        u[i] = w[i];
#pragma unroll
    for (int i = 0; i < N; ++i)
        q[i] = __funnelshift_r(u[i], u[i + 1], shift);
}

// ggml's get_scale_min_k4 on the 12 packed scale bytes of Q4_K/Q5_K held as three words
// (bytes 4..15 of the block, loaded with its header in one 16-byte load): byte j of the scales
// is in word j / 4, and j, j + 4, j - 4 share the shift for a runtime j without indexing the
// words at run time.
__device__ __forceinline__ void scaleMinK4Words(
    int j, std::uint32_t s0, std::uint32_t s1, std::uint32_t s2, int& scale, int& min)
{
    const unsigned shift = 8 * unsigned(j & 3);
    const int b0 = int((s0 >> shift) & 0xFF), b1 = int((s1 >> shift) & 0xFF);
    if (j < 4) {
        scale = b0 & 63;
        min = b1 & 63;
    } else {
        const int b2 = int((s2 >> shift) & 0xFF);
        scale = (b2 & 0xF) | ((b0 >> 6) << 4);
        min = (b2 >> 4) | ((b1 >> 6) << 4);
    }
}

// Byte i (0..31, known at compile time after unrolling) of the words q.
__device__ __forceinline__ std::uint32_t byteOf(const std::uint32_t* q, int i)
{
    return (q[i >> 2] >> (8 * (i & 3))) & 0xFFu;
}

} // namespace detail

template <TensorType Type> struct Chunk;

// The 32-value types: q holds the 16 nibble bytes (low nibbles values 0..15, high 16..31).
template <TensorType Type> struct Chunk32 {
    static constexpr int kBytes = BlockTraits<Type>::kBytes;
    static constexpr bool kHasMin = Type == TensorType::Q4_1 || Type == TensorType::Q5_1;
    static constexpr bool kHasHigh = Type == TensorType::Q5_0 || Type == TensorType::Q5_1;
    static constexpr int kQsOffset = 2 + (kHasMin ? 2 : 0) + (kHasHigh ? 4 : 0);
    static constexpr int kAlign = kBytes % 8 == 0 ? 8 : kBytes % 4 == 0 ? 4 : 2;
    std::uint32_t q[4];
    std::uint32_t qh;
    float d, m;

    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + chunk * kBytes;
        d = detail::halfBits(detail::loadU16(b));
        m = kHasMin ? detail::halfBits(detail::loadU16(b + 2)) : 0.0f;
        qh = 0;
        if constexpr (kHasHigh) {
            const std::uint8_t* h = b + (kHasMin ? 4 : 2);
            qh = std::uint32_t(detail::loadU16(h)) | (std::uint32_t(detail::loadU16(h + 2)) << 16);
        }
        detail::load16<(kQsOffset % kAlign == 0 ? kAlign : 2)>(b + kQsOffset, q);
    }

    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int j = 8 * p + i; // the value; its nibble is in byte j % 16
            std::uint32_t u = (detail::byteOf(q, j & 15) >> (j >= 16 ? 4 : 0)) & 0xF;
            if constexpr (kHasHigh)
                u |= ((qh >> j) & 1u) << 4;
            if constexpr (kHasMin)
                out[i] = detail::mulAddOp<Exact>(detail::exactFloat(u), d, m);
            else
                out[i] = detail::mulOp<Exact>(detail::exactFloat(u, kHasHigh ? 16 : 8), d);
        }
    }
};

template <> struct Chunk<TensorType::Q4_0> : Chunk32<TensorType::Q4_0> {
};
template <> struct Chunk<TensorType::Q4_1> : Chunk32<TensorType::Q4_1> {
};
template <> struct Chunk<TensorType::Q5_0> : Chunk32<TensorType::Q5_0> {
};
template <> struct Chunk<TensorType::Q5_1> : Chunk32<TensorType::Q5_1> {
};

template <> struct Chunk<TensorType::Q8_0> {
    std::uint32_t q[8];
    float d;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + chunk * 34;
        d = detail::halfBits(detail::loadU16(b));
        detail::load16<2>(b + 2, q);
        detail::load16<2>(b + 18, q + 4);
    }
    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i)
            out[i] = detail::mulOp<Exact>(
                detail::exactFloat(detail::byteOf(q, 8 * p + i) ^ 0x80u, 128), d);
    }
};

template <> struct Chunk<TensorType::Q2_K> {
    std::uint32_t q[8];
    float dl[2], ml[2];
    int shift;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + (chunk >> 3) * 84;
        const int sub = int(chunk & 7);
        shift = 2 * (sub & 3);
        const float d = detail::halfBits(detail::loadU16(b + 80));
        const float dmin = detail::halfBits(detail::loadU16(b + 82));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int sc = b[2 * sub + h];
            dl[h] = __fmul_rn(d, detail::exactFloat(std::uint32_t(sc & 0xF)));
            ml[h] = __fmul_rn(dmin, detail::exactFloat(std::uint32_t(sc >> 4)));
        }
        detail::load16<4>(b + 16 + 32 * (sub >> 2), q);
        detail::load16<4>(b + 32 + 32 * (sub >> 2), q + 4);
    }
    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const std::uint32_t u = (detail::byteOf(q, 8 * p + i) >> shift) & 3;
            out[i] = detail::mulSubOp<Exact>(dl[p >> 1], detail::exactFloat(u), ml[p >> 1]);
        }
    }
};

template <> struct Chunk<TensorType::Q3_K> {
    std::uint32_t q[8], hm[8];
    float dl[2];
    int shift;
    std::uint32_t mbit;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + (chunk >> 3) * 110;
        const int sub = int(chunk & 7);
        shift = 2 * (sub & 3);
        mbit = 1u << sub;
        const float d = detail::halfBits(detail::loadU16(b + 108));
        const std::uint8_t* packed = b + 96;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int is = 2 * sub + h;
            const int low = is < 8 ? (packed[is] & 0xF) : (packed[is - 8] >> 4);
            const int high = (packed[8 + (is & 3)] >> (2 * (is >> 2))) & 3;
            dl[h] = __fmul_rn(d, detail::exactFloat(std::uint32_t(low | (high << 4)), 32));
        }
        detail::load16<2>(b + 32 + 32 * (sub >> 2), q);
        detail::load16<2>(b + 48 + 32 * (sub >> 2), q + 4);
        detail::load16<2>(b, hm);
        detail::load16<2>(b + 16, hm + 4);
    }
    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int l = 8 * p + i;
            const std::uint32_t u
                = ((detail::byteOf(q, l) >> shift) & 3) | ((detail::byteOf(hm, l) & mbit) ? 4 : 0);
            out[i] = detail::mulOp<Exact>(dl[p >> 1], detail::exactFloat(u, 4));
        }
    }
};

// Q4_K and Q5_K: sub-block `sub` of a super-block, 32 nibbles (+ 32 high bits for Q5_K).
template <TensorType Type> struct ChunkK45 {
    static constexpr bool kQ5 = Type == TensorType::Q5_K;
    static constexpr int kBytes = kQ5 ? 176 : 144;
    std::uint32_t q[8], qh[kQ5 ? 8 : 1];
    float d1, m1;
    int shift, bit;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + (chunk >> 3) * kBytes;
        const int sub = int(chunk & 7);
        const uint4 head = *reinterpret_cast<const uint4*>(b); // d, dmin, 12 scale bytes
        int sc, mn;
        detail::scaleMinK4Words(sub, head.y, head.z, head.w, sc, mn);
        d1 = __fmul_rn(detail::halfBits(std::uint16_t(head.x & 0xFFFFu)),
            detail::exactFloat(std::uint32_t(sc)));
        m1 = __fmul_rn(
            detail::halfBits(std::uint16_t(head.x >> 16)), detail::exactFloat(std::uint32_t(mn)));
        shift = 4 * (sub & 1);
        bit = sub;
        const std::uint8_t* qs = b + (kQ5 ? 48 : 16) + 32 * (sub >> 1);
        detail::load16<16>(qs, q);
        detail::load16<16>(qs + 16, q + 4);
        if constexpr (kQ5) {
            detail::load16<16>(b + 16, qh);
            detail::load16<16>(b + 32, qh + 4);
        }
    }
    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            std::uint32_t u = (detail::byteOf(q, 8 * p + i) >> shift) & 0xF;
            if constexpr (kQ5)
                u |= ((detail::byteOf(qh, 8 * p + i) >> bit) & 1u) << 4;
            out[i] = detail::mulSubOp<Exact>(d1, detail::exactFloat(u), m1);
        }
    }
};

template <> struct Chunk<TensorType::Q4_K> : ChunkK45<TensorType::Q4_K> {
};
template <> struct Chunk<TensorType::Q5_K> : ChunkK45<TensorType::Q5_K> {
};

template <> struct Chunk<TensorType::Q6_K> {
    std::uint32_t ql[8], qh[8];
    float dsc[2];
    int lowShift, highShift;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + (chunk >> 3) * 210;
        const int sub = int(chunk & 7), n = sub >> 2, k = sub & 3;
        const float d = detail::halfBits(detail::loadU16(b + 208));
        const std::uint32_t scales = detail::loadU16(b + 192 + 8 * n + 2 * k); // 2 int8 scales
#pragma unroll
        for (int h = 0; h < 2; ++h)
            dsc[h] = __fmul_rn(d, detail::exactFloat(((scales >> (8 * h)) & 0xFFu) ^ 0x80u, 128));
        lowShift = 4 * (k >> 1);
        highShift = 2 * k;
        detail::loadWordsAligned2<8>(b + 64 * n + 32 * (k & 1), ql);
        detail::loadWordsAligned2<8>(b + 128 + 32 * n, qh);
    }
    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int l = 8 * p + i;
            const std::uint32_t u = ((detail::byteOf(ql, l) >> lowShift) & 0xF)
                | (((detail::byteOf(qh, l) >> highShift) & 3) << 4);
            out[i] = detail::mulOp<Exact>(dsc[p >> 1], detail::exactFloat(u, 32));
        }
    }
};

template <> struct Chunk<TensorType::IQ4_XS> {
    std::uint32_t q[4];
    float dl;
    __device__ __forceinline__ void load(const std::uint8_t* row, std::int64_t chunk)
    {
        const std::uint8_t* b = row + (chunk >> 3) * 136;
        const int ib = int(chunk & 7);
        const int scalesH = detail::loadU16(b + 2);
        const int ls
            = ((b[4 + (ib >> 1)] >> (4 * (ib & 1))) & 0xF) | (((scalesH >> (2 * ib)) & 3) << 4);
        dl = __fmul_rn(
            detail::halfBits(detail::loadU16(b)), detail::exactFloat(std::uint32_t(ls), 32));
        detail::load16<8>(b + 8 + 16 * ib, q);
    }
    template <bool Exact> __device__ __forceinline__ void piece(int p, float out[8]) const
    {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int j = 8 * p + i;
            const std::uint32_t u = (detail::byteOf(q, j & 15) >> (j >= 16 ? 4 : 0)) & 0xF;
            out[i] = detail::mulOp<Exact>(dl, detail::exactFloat(detail::iq4nlBiased(u), 128));
        }
    }
};

// True for the types Chunk decodes (every block type; the plain float types are read
// directly).
template <TensorType Type> constexpr bool kIsChunked = BlockTraits<Type>::kValues >= 32;

} // namespace cw::kernels::cuda
