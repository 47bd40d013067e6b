// Quantization with ggml's reference algorithms (quantize_row_*_ref in ggml-quants.c, the
// path llama-quantize takes without an importance matrix): same search for scales and mins,
// same rounding, so blocks match llama.cpp's up to float rounding.
#include "kernels/cpu/quant/quantize.h"

#include "kernels/cpu/quant/quant_blocks.h"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace cw::kernels::quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

// Round to nearest (ties to even) through the float mantissa, as ggml's nearest_int.
int nearestInt(float value)
{
    assert(std::fabs(value) <= 4194303.f);
    const float shifted = value + 12582912.f;
    int bits;
    std::memcpy(&bits, &shifted, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

void quantizeQ4_0(const float* x, BlockQ4_0* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, x += kQK4_0) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK4_0; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        for (int j = 0; j < kQK4_0 / 2; ++j) {
            const int q0 = std::min(15, int(std::int8_t(x[j] * id + 8.5f)));
            const int q1 = std::min(15, int(std::int8_t(x[j + kQK4_0 / 2] * id + 8.5f)));
            y[i].qs[j] = std::uint8_t(q0 | (q1 << 4));
        }
    }
}

template <typename Block, int kLevels>
void quantizeWithMin(const float* x, Block* y, std::int64_t nb)
{
    constexpr int qk = 32;
    for (std::int64_t i = 0; i < nb; ++i, x += qk) {
        float min = FLT_MAX, max = -FLT_MAX;
        for (int j = 0; j < qk; ++j) {
            min = std::min(min, x[j]);
            max = std::max(max, x[j]);
        }
        const float d = (max - min) / float(kLevels - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        y[i].m = fp32ToFp16(min);
        std::uint32_t qh = 0;
        for (int j = 0; j < qk / 2; ++j) {
            int q0 = int(std::uint8_t((x[j] - min) * id + 0.5f));
            int q1 = int(std::uint8_t((x[j + qk / 2] - min) * id + 0.5f));
            if constexpr (kLevels == 16) {
                q0 = std::min(15, q0);
                q1 = std::min(15, q1);
            }
            y[i].qs[j] = std::uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= std::uint32_t((q0 & 0x10) >> 4) << j;
            qh |= std::uint32_t((q1 & 0x10) >> 4) << (j + qk / 2);
        }
        if constexpr (kLevels == 32)
            std::memcpy(y[i].qh, &qh, sizeof qh);
    }
}

void quantizeQ5_0(const float* x, BlockQ5_0* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, x += kQK5_0) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK5_0; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        std::uint32_t qh = 0;
        for (int j = 0; j < kQK5_0 / 2; ++j) {
            const int q0 = std::min(31, int(std::int8_t(x[j] * id + 16.5f)));
            const int q1 = std::min(31, int(std::int8_t(x[j + kQK5_0 / 2] * id + 16.5f)));
            y[i].qs[j] = std::uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= std::uint32_t((q0 & 0x10) >> 4) << j;
            qh |= std::uint32_t((q1 & 0x10) >> 4) << (j + kQK5_0 / 2);
        }
        std::memcpy(y[i].qh, &qh, sizeof qh);
    }
}

void quantizeQ8_0(const float* x, BlockQ8_0* y, std::int64_t nb)
{
    for (std::int64_t i = 0; i < nb; ++i, x += kQK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < kQK8_0; ++j)
            amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        for (int j = 0; j < kQK8_0; ++j)
            y[i].qs[j] = std::int8_t(std::round(x[j] * id));
    }
}

// ggml's make_qkx2_quants: a scale and a (non-positive) min for one sub-block of n values with
// levels 0..nmax, searched over nstep+1 candidate scales, weighted squared error.
float makeQkx2Quants(int n, int nmax, const float* x, const float* weights, std::uint8_t* levels,
    float* theMin, std::uint8_t* aux, float rmin, float rdelta, int nstep)
{
    float min = x[0], max = x[0];
    float sumW = weights[0];
    float sumX = sumW * x[0];
    for (int i = 1; i < n; ++i) {
        min = std::min(min, x[i]);
        max = std::max(max, x[i]);
        sumW += weights[i];
        sumX += weights[i] * x[i];
    }
    if (min > 0)
        min = 0;
    if (max == min) {
        std::fill(levels, levels + n, std::uint8_t(0));
        *theMin = -min;
        return 0.f;
    }
    float iscale = float(nmax) / (max - min);
    float scale = 1 / iscale;
    float bestError = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
        levels[i] = std::uint8_t(l);
        const float diff = scale * float(levels[i]) + min - x[i];
        bestError += weights[i] * diff * diff;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
        float sumL = 0, sumL2 = 0, sumXL = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
            aux[i] = std::uint8_t(l);
            const float w = weights[i];
            sumL += w * float(l);
            sumL2 += w * float(l) * float(l);
            sumXL += w * float(l) * x[i];
        }
        const float det = sumW * sumL2 - sumL * sumL;
        if (det > 0) {
            float thisScale = (sumW * sumXL - sumX * sumL) / det;
            float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
            if (thisMin > 0) {
                thisMin = 0;
                thisScale = sumXL / sumL2;
            }
            float error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = thisScale * float(aux[i]) + thisMin - x[i];
                error += weights[i] * diff * diff;
            }
            if (error < bestError) {
                std::copy(aux, aux + n, levels);
                bestError = error;
                scale = thisScale;
                min = thisMin;
            }
        }
    }
    *theMin = -min;
    return scale;
}

// ggml's make_qx_quants with rmse_type 1 and no importance: a signed scale for n values
// with levels -nmax..nmax-1 (stored + nmax), trying 19 scales around nmax/max.
float makeQxQuants(int n, int nmax, const float* x, std::int8_t* levels)
{
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        std::fill(levels, levels + n, std::int8_t(0));
        return 0.f;
    }
    auto fit = [&](float iscale, float& sumLX, float& sumL2, bool store) {
        sumLX = sumL2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
            if (store)
                levels[i] = std::int8_t(l + nmax);
            const float w = x[i] * x[i];
            sumLX += w * x[i] * float(l);
            sumL2 += w * float(l) * float(l);
        }
    };
    float sumLX, sumL2;
    fit(-float(nmax) / max, sumLX, sumL2, true);
    float scale = sumL2 != 0 ? sumLX / sumL2 : 0.0f;
    float best = scale * sumLX;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        const float iscale = -(float(nmax) + 0.1f * float(is)) / max;
        fit(iscale, sumLX, sumL2, false);
        if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
            fit(iscale, sumLX, sumL2, true);
            scale = sumLX / sumL2;
            best = scale * sumLX;
        }
    }
    return scale;
}

// Scales and mins of 8 sub-blocks of 32 for Q4_K (nmax 15) and Q5_K (nmax 31): returns the
// levels in L and fills the packed 6-bit scales, d and dmin.
template <typename Block>
void quantizeKWithMins(
    const float* x, Block& y, int nmax, float rmin, float rdelta, int nstep, std::uint8_t* levels)
{
    std::uint8_t aux[32];
    float weights[32], mins[8], scales[8];
    float maxScale = 0, maxMin = 0;
    for (int j = 0; j < 8; ++j) {
        float sumX2 = 0;
        for (int l = 0; l < 32; ++l)
            sumX2 += x[32 * j + l] * x[32 * j + l];
        const float avX = std::sqrt(sumX2 / 32);
        for (int l = 0; l < 32; ++l)
            weights[l] = avX + std::fabs(x[32 * j + l]);
        scales[j] = makeQkx2Quants(
            32, nmax, x + 32 * j, weights, levels + 32 * j, &mins[j], aux, rmin, rdelta, nstep);
        maxScale = std::max(maxScale, scales[j]);
        maxMin = std::max(maxMin, mins[j]);
    }
    const float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
    const float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
    for (int j = 0; j < 8; ++j) {
        const std::uint8_t ls
            = std::min<std::uint8_t>(63, std::uint8_t(nearestInt(invScale * scales[j])));
        const std::uint8_t lm
            = std::min<std::uint8_t>(63, std::uint8_t(nearestInt(invMin * mins[j])));
        if (j < 4) {
            y.scales[j] = ls;
            y.scales[j + 4] = lm;
        } else {
            y.scales[j + 4] = std::uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
            y.scales[j - 4] = std::uint8_t(y.scales[j - 4] | ((ls >> 4) << 6));
            y.scales[j] = std::uint8_t(y.scales[j] | ((lm >> 4) << 6));
        }
    }
    y.d = fp32ToFp16(maxScale / 63.f);
    y.dmin = fp32ToFp16(maxMin / 63.f);
    for (int j = 0; j < 8; ++j) {
        std::uint8_t sc, m;
        scaleMinK4(j, y.scales, sc, m);
        const float d = fp16ToFp32(y.d) * float(sc);
        if (d == 0.0f)
            continue;
        const float dm = fp16ToFp32(y.dmin) * float(m);
        for (int ii = 0; ii < 32; ++ii)
            levels[32 * j + ii]
                = std::uint8_t(std::clamp(nearestInt((x[32 * j + ii] + dm) / d), 0, nmax));
    }
}

void quantizeQ4_K(const float* x, BlockQ4_K* y, std::int64_t nb)
{
    std::uint8_t levels[kQK_K];
    for (std::int64_t i = 0; i < nb; ++i, x += kQK_K) {
        std::memset(&y[i], 0, sizeof y[i]);
        quantizeKWithMins(x, y[i], 15, -1.f, 0.1f, 20, levels);
        std::uint8_t* q = y[i].qs;
        for (int j = 0; j < kQK_K; j += 64, q += 32) {
            for (int l = 0; l < 32; ++l)
                q[l] = std::uint8_t(levels[j + l] | (levels[j + l + 32] << 4));
        }
    }
}

void quantizeQ5_K(const float* x, BlockQ5_K* y, std::int64_t nb)
{
    std::uint8_t levels[kQK_K];
    for (std::int64_t i = 0; i < nb; ++i, x += kQK_K) {
        std::memset(&y[i], 0, sizeof y[i]);
        quantizeKWithMins(x, y[i], 31, -0.5f, 0.1f, 15, levels);
        std::uint8_t* qh = y[i].qh;
        std::uint8_t* ql = y[i].qs;
        std::uint8_t m1 = 1, m2 = 2;
        for (int n = 0; n < kQK_K; n += 64, ql += 32) {
            for (int j = 0; j < 32; ++j) {
                int l1 = levels[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] |= m1;
                }
                int l2 = levels[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] |= m2;
                }
                ql[j] = std::uint8_t(l1 | (l2 << 4));
            }
            m1 = std::uint8_t(m1 << 2);
            m2 = std::uint8_t(m2 << 2);
        }
    }
}

void quantizeQ6_K(const float* x, BlockQ6_K* y, std::int64_t nb)
{
    std::int8_t levels[kQK_K];
    float scales[kQK_K / 16];
    for (std::int64_t i = 0; i < nb; ++i, x += kQK_K) {
        float maxScale = 0, maxAbsScale = 0;
        for (int ib = 0; ib < kQK_K / 16; ++ib) {
            scales[ib] = makeQxQuants(16, 32, x + 16 * ib, levels + 16 * ib);
            if (std::fabs(scales[ib]) > maxAbsScale) {
                maxAbsScale = std::fabs(scales[ib]);
                maxScale = scales[ib];
            }
        }
        std::memset(&y[i], 0, sizeof y[i]);
        if (maxAbsScale < kGroupMaxEps)
            continue; // all zero: d = 0
        const float iscale = -128.f / maxScale;
        y[i].d = fp32ToFp16(1 / iscale);
        for (int ib = 0; ib < kQK_K / 16; ++ib)
            y[i].scales[ib] = std::int8_t(std::min(127, nearestInt(iscale * scales[ib])));
        for (int j = 0; j < kQK_K / 16; ++j) {
            const float d = fp16ToFp32(y[i].d) * float(y[i].scales[j]);
            if (d == 0.0f)
                continue;
            for (int ii = 0; ii < 16; ++ii)
                levels[16 * j + ii]
                    = std::int8_t(std::clamp(nearestInt(x[16 * j + ii] / d), -32, 31) + 32);
        }
        std::uint8_t* ql = y[i].ql;
        std::uint8_t* qh = y[i].qh;
        for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const int q1 = levels[j + l] & 0xF, q2 = levels[j + l + 32] & 0xF;
                const int q3 = levels[j + l + 64] & 0xF, q4 = levels[j + l + 96] & 0xF;
                ql[l] = std::uint8_t(q1 | (q3 << 4));
                ql[l + 32] = std::uint8_t(q2 | (q4 << 4));
                qh[l] = std::uint8_t((levels[j + l] >> 4) | ((levels[j + l + 32] >> 4) << 2)
                    | ((levels[j + l + 64] >> 4) << 4) | ((levels[j + l + 96] >> 4) << 6));
            }
        }
    }
}

} // namespace

bool canQuantize(TensorType type)
{
    switch (type) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q8_0:
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
        return true;
    default:
        return false;
    }
}

bool quantizeRow(TensorType type, const float* src, void* dst, std::int64_t n)
{
    if (!canQuantize(type))
        return false;
    const auto traits = tensorTypeTraits(std::uint32_t(type));
    assert(traits && n % traits->blockSize == 0);
    const std::int64_t nb = n / std::int64_t(traits->blockSize);
    switch (type) {
    case TensorType::F32:
        std::memcpy(dst, src, std::size_t(n) * sizeof(float));
        break;
    case TensorType::F16:
        for (std::int64_t i = 0; i < n; ++i)
            static_cast<std::uint16_t*>(dst)[i] = fp32ToFp16(src[i]);
        break;
    case TensorType::BF16:
        for (std::int64_t i = 0; i < n; ++i)
            static_cast<std::uint16_t*>(dst)[i] = fp32ToBf16(src[i]);
        break;
    case TensorType::Q8_0:
        quantizeQ8_0(src, static_cast<BlockQ8_0*>(dst), nb);
        break;
    case TensorType::Q4_0:
        quantizeQ4_0(src, static_cast<BlockQ4_0*>(dst), nb);
        break;
    case TensorType::Q4_1:
        quantizeWithMin<BlockQ4_1, 16>(src, static_cast<BlockQ4_1*>(dst), nb);
        break;
    case TensorType::Q5_0:
        quantizeQ5_0(src, static_cast<BlockQ5_0*>(dst), nb);
        break;
    case TensorType::Q5_1:
        quantizeWithMin<BlockQ5_1, 32>(src, static_cast<BlockQ5_1*>(dst), nb);
        break;
    case TensorType::Q4_K:
        quantizeQ4_K(src, static_cast<BlockQ4_K*>(dst), nb);
        break;
    case TensorType::Q5_K:
        quantizeQ5_K(src, static_cast<BlockQ5_K*>(dst), nb);
        break;
    case TensorType::Q6_K:
        quantizeQ6_K(src, static_cast<BlockQ6_K*>(dst), nb);
        break;
    default:
        return false;
    }
    return true;
}

} // namespace cw::kernels::quant
