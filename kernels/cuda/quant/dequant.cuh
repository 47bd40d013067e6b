#pragma once

// Device-side decoding of the GGUF block types, eight values at a time, bit for bit as the
// CPU's kernels/cpu/quant/dequantize.cpp (ggml's dequantize_row_*): every product and sum is
// written with __fmul_rn/__fadd_rn/__fsub_rn so nvcc cannot contract it into an FMA, which
// would round once where the CPU rounds twice.
//
// Alignment: a row pointer must be aligned as its blocks are when the matrix starts on a
// 16-byte boundary and rows are whole blocks apart (2 bytes for Q4_0, Q5_0, Q8_0, Q3_K, Q6_K
// and F16/BF16, 4 bytes for every other type); the loads below rely on it.

#include "kernels/tensor_type.h"

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <utility>

namespace cw::kernels::cuda {

// Values and bytes of one block of Type (1 value for the plain float types).
template <TensorType Type> struct BlockTraits;
template <> struct BlockTraits<TensorType::F32> {
    static constexpr int kValues = 1, kBytes = 4;
};
template <> struct BlockTraits<TensorType::F16> {
    static constexpr int kValues = 1, kBytes = 2;
};
template <> struct BlockTraits<TensorType::BF16> {
    static constexpr int kValues = 1, kBytes = 2;
};
template <> struct BlockTraits<TensorType::Q4_0> {
    static constexpr int kValues = 32, kBytes = 18;
};
template <> struct BlockTraits<TensorType::Q4_1> {
    static constexpr int kValues = 32, kBytes = 20;
};
template <> struct BlockTraits<TensorType::Q5_0> {
    static constexpr int kValues = 32, kBytes = 22;
};
template <> struct BlockTraits<TensorType::Q5_1> {
    static constexpr int kValues = 32, kBytes = 24;
};
template <> struct BlockTraits<TensorType::Q8_0> {
    static constexpr int kValues = 32, kBytes = 34;
};
template <> struct BlockTraits<TensorType::Q2_K> {
    static constexpr int kValues = 256, kBytes = 84;
};
template <> struct BlockTraits<TensorType::Q3_K> {
    static constexpr int kValues = 256, kBytes = 110;
};
template <> struct BlockTraits<TensorType::Q4_K> {
    static constexpr int kValues = 256, kBytes = 144;
};
template <> struct BlockTraits<TensorType::Q5_K> {
    static constexpr int kValues = 256, kBytes = 176;
};
template <> struct BlockTraits<TensorType::Q6_K> {
    static constexpr int kValues = 256, kBytes = 210;
};
template <> struct BlockTraits<TensorType::IQ4_XS> {
    static constexpr int kValues = 256, kBytes = 136;
};

namespace detail {

__device__ __forceinline__ float halfBits(std::uint16_t bits)
{
    return __half2float(__ushort_as_half(bits));
}

__device__ __forceinline__ std::uint16_t loadU16(const std::uint8_t* p)
{
    return *reinterpret_cast<const std::uint16_t*>(p);
}

// Eight bytes at p, p aligned to Align (2, 4 or 8) bytes.
template <int Align> __device__ __forceinline__ uint2 load8(const std::uint8_t* p)
{
    if constexpr (Align >= 8) {
        return *reinterpret_cast<const uint2*>(p);
    } else if constexpr (Align >= 4) {
        const auto* q = reinterpret_cast<const std::uint32_t*>(p);
        return make_uint2(q[0], q[1]);
    } else {
        const auto* q = reinterpret_cast<const std::uint16_t*>(p);
        return make_uint2(std::uint32_t(q[0]) | (std::uint32_t(q[1]) << 16),
            std::uint32_t(q[2]) | (std::uint32_t(q[3]) << 16));
    }
}

// float(u - offset) for 0 <= u < 2^22, exactly, without the quarter-rate I2F: 2^23 + u is
// exact in a float's mantissa, and subtracting 2^23 + offset is exact for small integers.
__device__ __forceinline__ float exactFloat(std::uint32_t u, int offset = 0)
{
    return __fsub_rn(__uint_as_float(0x4B000000u | u), 8388608.0f + float(offset));
}

__device__ __forceinline__ int byteAt(uint2 w, int i)
{
    return int(((i < 4 ? w.x : w.y) >> (8 * (i & 3))) & 0xFFu);
}

// ggml's kvalues_iq4nl plus 128 (so unsigned), as a register lookup: __byte_perm picks byte
// q of the packed table. Levels: -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53,
// 69, 89, 113.
__device__ __forceinline__ std::uint32_t iq4nlBiased(std::uint32_t q)
{
    const std::uint32_t v = q < 8 ? __byte_perm(0x3F2D1801u, 0x766A5D4Fu, q)
                                  : __byte_perm(0xA6998D81u, 0xF1D9C5B5u, q & 7);
    return v & 0xFFu;
}

// ggml's get_scale_min_k4 on the 12 packed scale bytes of Q4_K/Q5_K.
__device__ __forceinline__ void scaleMinK4(int j, const std::uint8_t* q, int& scale, int& min)
{
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

} // namespace detail

// Values [8 * group, 8 * group + 8) of one row of Type (the row starts at `row`, a block
// boundary).
template <TensorType Type>
__device__ __forceinline__ void dequant8(const std::uint8_t* row, std::int64_t group, float out[8])
{
    using namespace detail;
    if constexpr (Type == TensorType::F32) {
        const float* p = reinterpret_cast<const float*>(row) + 8 * group;
        if ((reinterpret_cast<std::uintptr_t>(p) & 15) == 0) {
            const float4 a = reinterpret_cast<const float4*>(p)[0];
            const float4 b = reinterpret_cast<const float4*>(p)[1];
            out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
            out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
        } else {
#pragma unroll
            for (int i = 0; i < 8; ++i)
                out[i] = p[i];
        }
    } else if constexpr (Type == TensorType::F16 || Type == TensorType::BF16) {
        const std::uint8_t* p = row + 16 * group;
        std::uint16_t h[8];
        if ((reinterpret_cast<std::uintptr_t>(p) & 15) == 0) {
            const uint4 v = *reinterpret_cast<const uint4*>(p);
            const std::uint32_t w[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                h[2 * i] = std::uint16_t(w[i] & 0xFFFFu);
                h[2 * i + 1] = std::uint16_t(w[i] >> 16);
            }
        } else {
#pragma unroll
            for (int i = 0; i < 8; ++i)
                h[i] = loadU16(p + 2 * i);
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if constexpr (Type == TensorType::F16)
                out[i] = halfBits(h[i]);
            else
                out[i] = __uint_as_float(std::uint32_t(h[i]) << 16);
        }
    } else if constexpr (Type == TensorType::Q4_0 || Type == TensorType::Q4_1
        || Type == TensorType::Q5_0 || Type == TensorType::Q5_1) {
        constexpr int kBytes = BlockTraits<Type>::kBytes;
        constexpr bool kHasMin = Type == TensorType::Q4_1 || Type == TensorType::Q5_1;
        constexpr bool kHasHigh = Type == TensorType::Q5_0 || Type == TensorType::Q5_1;
        constexpr int kQsOffset = 2 + (kHasMin ? 2 : 0) + (kHasHigh ? 4 : 0);
        constexpr int kAlign = kBytes % 4 == 0 ? 4 : 2;
        const std::uint8_t* b = row + (group >> 2) * kBytes;
        const int s = int(group & 3); // eighth of the block: values 8s..8s+7
        const float d = halfBits(loadU16(b));
        const uint2 q = load8<kAlign>(b + kQsOffset + 8 * (s & 1));
        const int shift = 4 * (s >> 1);
        std::uint32_t qh = 0;
        if constexpr (kHasHigh) {
            const std::uint8_t* h = b + (kHasMin ? 4 : 2);
            qh = std::uint32_t(loadU16(h)) | (std::uint32_t(loadU16(h + 2)) << 16);
        }
        float m = 0.0f;
        if constexpr (kHasMin)
            m = halfBits(loadU16(b + 2));
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            int v = (byteAt(q, i) >> shift) & 0xF;
            if constexpr (kHasHigh) // bit 8s+i of qh is the fifth bit of value 8s+i
                v |= int((qh >> (8 * s + i)) & 1u) << 4;
            if constexpr (kHasMin)
                out[i] = __fadd_rn(__fmul_rn(exactFloat(std::uint32_t(v)), d), m);
            else
                out[i] = __fmul_rn(exactFloat(std::uint32_t(v), kHasHigh ? 16 : 8), d);
        }
    } else if constexpr (Type == TensorType::Q8_0) {
        const std::uint8_t* b = row + (group >> 2) * 34;
        const float d = halfBits(loadU16(b));
        const uint2 q = load8<2>(b + 2 + 8 * (group & 3));
#pragma unroll
        for (int i = 0; i < 8; ++i)
            out[i] = __fmul_rn(exactFloat(std::uint32_t(byteAt(q, i) ^ 0x80), 128), d);
    } else {
        // Super-blocks of 256: v0 is the first of the eight values inside the block.
        const std::uint8_t* b = row + (group >> 5) * BlockTraits<Type>::kBytes;
        const int v0 = 8 * int(group & 31);
        if constexpr (Type == TensorType::Q2_K) {
            const int n = v0 >> 7, rem = v0 & 127, shift = 2 * (rem >> 5);
            const int sc = b[v0 >> 4];
            const float d = halfBits(loadU16(b + 80));
            const float dmin = halfBits(loadU16(b + 82));
            const float dl = __fmul_rn(d, exactFloat(std::uint32_t(sc & 0xF)));
            const float ml = __fmul_rn(dmin, exactFloat(std::uint32_t(sc >> 4)));
            const uint2 q = load8<4>(b + 16 + 32 * n + (rem & 31));
#pragma unroll
            for (int i = 0; i < 8; ++i)
                out[i] = __fsub_rn(__fmul_rn(dl, exactFloat((byteAt(q, i) >> shift) & 3)), ml);
        } else if constexpr (Type == TensorType::Q3_K) {
            const int n = v0 >> 7, rem = v0 & 127, shift = 2 * (rem >> 5);
            const int is = v0 >> 4;
            const std::uint8_t* packed = b + 96;
            const int low = is < 8 ? (packed[is] & 0xF) : (packed[is - 8] >> 4);
            const int high = (packed[8 + (is & 3)] >> (2 * (is >> 2))) & 3;
            const int scale = (low | (high << 4)) - 32;
            const float dl
                = __fmul_rn(halfBits(loadU16(b + 108)), exactFloat(std::uint32_t(scale + 32), 32));
            const std::uint32_t mbit = 1u << (4 * n + (rem >> 5));
            const uint2 q = load8<2>(b + 32 + 32 * n + (rem & 31));
            const uint2 hm = load8<2>(b + (rem & 31));
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                // (q - (high bit clear ? 4 : 0)) as (q | high << 2) - 4.
                const std::uint32_t u
                    = ((byteAt(q, i) >> shift) & 3) | ((byteAt(hm, i) & mbit) ? 4 : 0);
                out[i] = __fmul_rn(dl, exactFloat(u, 4));
            }
        } else if constexpr (Type == TensorType::Q4_K || Type == TensorType::Q5_K) {
            constexpr bool kQ5 = Type == TensorType::Q5_K;
            const int c = v0 >> 6, r = v0 & 63, j = 2 * c + (r >> 5);
            int sc, mn;
            scaleMinK4(j, b + 4, sc, mn);
            const float d1 = __fmul_rn(halfBits(loadU16(b)), exactFloat(std::uint32_t(sc)));
            const float m1 = __fmul_rn(halfBits(loadU16(b + 2)), exactFloat(std::uint32_t(mn)));
            const uint2 q = load8<4>(b + (kQ5 ? 48 : 16) + 32 * c + (r & 31));
            const int shift = 4 * (r >> 5);
            uint2 qh = make_uint2(0, 0);
            if constexpr (kQ5)
                qh = load8<4>(b + 16 + (r & 31));
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                int v = (byteAt(q, i) >> shift) & 0xF;
                if constexpr (kQ5)
                    v += (byteAt(qh, i) >> j) & 1 ? 16 : 0;
                out[i] = __fsub_rn(__fmul_rn(d1, exactFloat(std::uint32_t(v))), m1);
            }
        } else if constexpr (Type == TensorType::Q6_K) {
            const int n = v0 >> 7, rem = v0 & 127, k = rem >> 5, l0 = rem & 31;
            const float d = halfBits(loadU16(b + 208));
            const int sc = int(std::int8_t(b[192 + 8 * n + (l0 >> 4) + 2 * k]));
            const float dsc = __fmul_rn(d, exactFloat(std::uint32_t(sc + 128), 128));
            const uint2 ql = load8<2>(b + 64 * n + l0 + 32 * (k & 1));
            const uint2 qh = load8<2>(b + 128 + 32 * n + l0);
            const int lowShift = 4 * (k >> 1), highShift = 2 * k;
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const std::uint32_t u = ((byteAt(ql, i) >> lowShift) & 0xF)
                    | (((byteAt(qh, i) >> highShift) & 3) << 4);
                out[i] = __fmul_rn(dsc, exactFloat(u, 32));
            }
        } else if constexpr (Type == TensorType::IQ4_XS) {
            const int ib = v0 >> 5, r = v0 & 31;
            const int scalesH = loadU16(b + 2);
            const int ls
                = ((b[4 + (ib >> 1)] >> (4 * (ib & 1))) & 0xF) | (((scalesH >> (2 * ib)) & 3) << 4);
            const float dl = __fmul_rn(halfBits(loadU16(b)), exactFloat(std::uint32_t(ls), 32));
            const uint2 q = load8<4>(b + 8 + 16 * ib + (r & 15));
            const int shift = 4 * (r >> 4);
#pragma unroll
            for (int i = 0; i < 8; ++i)
                out[i] = __fmul_rn(dl, exactFloat(iq4nlBiased((byteAt(q, i) >> shift) & 0xF), 128));
        } else {
            static_assert(Type == TensorType::IQ4_XS, "dequant8: unsupported type");
        }
    }
}

// Calls f.template operator()<Type>() for a runtime type (host side); returns false for
// unsupported types.
template <class F> bool dispatchMatrixType(TensorType type, F&& f)
{
    switch (type) {
#define CW_DISPATCH_CASE(T)                                                                        \
    case TensorType::T:                                                                            \
        std::forward<F>(f).template operator()<TensorType::T>();                                   \
        return true;
        CW_DISPATCH_CASE(F32)
        CW_DISPATCH_CASE(F16)
        CW_DISPATCH_CASE(BF16)
        CW_DISPATCH_CASE(Q4_0)
        CW_DISPATCH_CASE(Q4_1)
        CW_DISPATCH_CASE(Q5_0)
        CW_DISPATCH_CASE(Q5_1)
        CW_DISPATCH_CASE(Q8_0)
        CW_DISPATCH_CASE(Q2_K)
        CW_DISPATCH_CASE(Q3_K)
        CW_DISPATCH_CASE(Q4_K)
        CW_DISPATCH_CASE(Q5_K)
        CW_DISPATCH_CASE(Q6_K)
        CW_DISPATCH_CASE(IQ4_XS)
#undef CW_DISPATCH_CASE
    }
    return false;
}

} // namespace cw::kernels::cuda
