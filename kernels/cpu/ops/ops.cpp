#include "kernels/cpu/ops/ops.h"

#include "kernels/cpu/ops/attention_avx2.h"
#include "kernels/cpu/ops/delta_net_rows_x86.h"
#include "kernels/cpu/ops/gated_delta_rule_x86.h"
#include "kernels/cpu/quant/dot.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace cw::kernels::ops {

void rmsNorm(const float* x, const float* w, std::int64_t n, float eps, float* out)
{
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i)
        sum += double(x[i]) * double(x[i]);
    const float scale = float(1.0 / std::sqrt(sum / double(n) + double(eps)));
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = w ? x[i] * scale * w[i] : x[i] * scale;
}

void l2Normalize(float* x, std::int64_t n, float eps)
{
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i)
        sum += double(x[i]) * double(x[i]);
    const float scale = float(1.0 / std::sqrt(sum + double(eps)));
    for (std::int64_t i = 0; i < n; ++i)
        x[i] *= scale;
}

float sigmoid(float x)
{
    return 1.0f / (1.0f + std::exp(-x));
}

float silu(float x)
{
    return x / (1.0f + std::exp(-x));
}

float softplus(float x)
{
    return x > 20.0f ? x : std::log1p(std::exp(x));
}

void siluMul(float* x, const float* gate, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        x[i] *= silu(gate[i]);
}

void softmax(float* x, std::int64_t n)
{
    if (n <= 0)
        return;
    const float mx = *std::max_element(x, x + n);
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - mx);
        sum += x[i];
    }
    const float inv = float(1.0 / sum);
    for (std::int64_t i = 0; i < n; ++i)
        x[i] *= inv;
}

void ropeInverseFrequencies(double theta, std::int64_t ropeDim, float* invFreq)
{
    // transformers: 1 / base ** (arange(0, dim, 2).float() / dim), in float32.
    for (std::int64_t i = 0; i < ropeDim / 2; ++i) {
        const float exponent = float(2 * i) / float(ropeDim);
        invFreq[i] = 1.0f / std::pow(float(theta), exponent);
    }
}

void ropeNeox(float* head, std::int64_t ropeDim, const float* invFreq, std::int64_t pos)
{
    const std::int64_t half = ropeDim / 2;
    for (std::int64_t i = 0; i < half; ++i) {
        const float angle = float(pos) * invFreq[i]; // float32 as transformers
        const float c = std::cos(angle);
        const float s = std::sin(angle);
        const float a = head[i];
        const float b = head[i + half];
        head[i] = a * c - b * s;
        head[i + half] = b * c + a * s;
    }
}

void topK(const float* x, std::int64_t n, int k, int* index, float* value)
{
    assert(k <= n);
    for (int j = 0; j < k; ++j) {
        index[j] = -1;
        value[j] = -INFINITY;
    }
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (index[k - 1] >= 0 && !(v > value[k - 1]))
            continue;
        int pos = k - 1;
        while (pos > 0 && (index[pos - 1] < 0 || v > value[pos - 1])) {
            index[pos] = index[pos - 1];
            value[pos] = value[pos - 1];
            --pos;
        }
        index[pos] = int(i);
        value[pos] = v;
    }
}

namespace {

// The portable convolution: channel by channel, the loops the vector versions follow.
void causalConv1dSiluPortable(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride)
{
    const int hist = kernel - 1;
    std::vector<float> window(static_cast<std::size_t>(kernel));
    for (std::int64_t c = 0; c < channels; ++c) {
        float* st = state + c * hist;
        const float* wc = w + c * kernel;
        for (int j = 0; j < hist; ++j)
            window[std::size_t(j)] = st[j];
        for (std::int64_t t = 0; t < nTokens; ++t) {
            window[std::size_t(hist)] = in[t * inStride + c];
            float acc = 0.0f;
            for (int i = 0; i < kernel; ++i)
                acc += wc[i] * window[std::size_t(i)];
            out[t * outStride + c] = silu(acc);
            for (int j = 0; j < hist; ++j)
                window[std::size_t(j)] = window[std::size_t(j + 1)];
        }
        for (int j = 0; j < hist; ++j)
            st[j] = window[std::size_t(j)];
    }
}

} // namespace

void causalConv1dSilu(const float* in, std::int64_t inStride, std::int64_t nTokens,
    std::int64_t channels, const float* w, int kernel, float* state, float* out,
    std::int64_t outStride)
{
    const quant::CpuKernelPath path = quant::activeCpuKernelPath();
    const bool vectorKernel = kernel >= kConvVectorKernelMin && kernel <= kConvVectorKernelMax;
    if (path == quant::CpuKernelPath::Avx512 && vectorKernel)
        causalConv1dSiluAvx512(in, inStride, nTokens, channels, w, kernel, state, out, outStride);
    else if (path != quant::CpuKernelPath::Portable && vectorKernel)
        causalConv1dSiluAvx2(in, inStride, nTokens, channels, w, kernel, state, out, outStride);
    else
        causalConv1dSiluPortable(in, inStride, nTokens, channels, w, kernel, state, out, outStride);
}

void gatedRmsNorm(
    float* x, const float* gate, std::int64_t rows, std::int64_t n, const float* w, float eps)
{
    const quant::CpuKernelPath path = quant::activeCpuKernelPath();
    if (path == quant::CpuKernelPath::Avx512 && n % 16 == 0)
        gatedRmsNormAvx512(x, gate, rows, n, w, eps);
    else if (path != quant::CpuKernelPath::Portable && n % 8 == 0)
        gatedRmsNormAvx2(x, gate, rows, n, w, eps);
    else
        for (std::int64_t r = 0; r < rows; ++r) {
            rmsNorm(x + r * n, w, n, eps, x + r * n);
            siluMul(x + r * n, gate + r * n, n);
        }
}

namespace {

// The portable gated delta rule: the plain loops the vector versions
// (gated_delta_rule_x86.h) follow term for term.
void gatedDeltaRuleRecurrentPortable(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride)
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
        // kv_mem[j] = sum_i S[i][j] k[i]
        std::fill(delta.begin(), delta.end(), 0.0f);
        for (std::int64_t i = 0; i < dk; ++i) {
            const float ki = kt[i];
            const float* row = state + i * dv;
            for (std::int64_t j = 0; j < dv; ++j)
                delta[std::size_t(j)] += row[j] * ki;
        }
        for (std::int64_t j = 0; j < dv; ++j)
            delta[std::size_t(j)] = (vt[j] - delta[std::size_t(j)]) * beta[t];
        float* o = out + t * outStride;
        std::fill(o, o + dv, 0.0f);
        for (std::int64_t i = 0; i < dk; ++i) {
            float* row = state + i * dv;
            const float ki = kt[i];
            const float qi = qt[i] * qScale;
            for (std::int64_t j = 0; j < dv; ++j) {
                row[j] += ki * delta[std::size_t(j)];
                o[j] += row[j] * qi;
            }
        }
    }
}

void gatedDeltaRuleChunkedPortable(const float* q, const float* k, std::int64_t qkStride,
    const float* v, std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens,
    std::int64_t dk, std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk)
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
        // A[i][j] = beta_i (k_i . k_j) exp(cum_i - cum_j), j < i; qk[i][j] = (q_i . k_j)
        // exp(cum_i - cum_j), j <= i.
        for (std::int64_t i = 0; i < n; ++i) {
            for (std::int64_t j = 0; j <= i; ++j) {
                float kk = 0.0f, qkv = 0.0f;
                const float* ki = kc + i * qkStride;
                const float* kj = kc + j * qkStride;
                const float* qi = qc + i * qkStride;
                for (std::int64_t d = 0; d < dk; ++d) {
                    kk += ki[d] * kj[d];
                    qkv += qi[d] * kj[d];
                }
                const float decay = std::exp(cum[std::size_t(i)] - cum[std::size_t(j)]);
                A[std::size_t(i) * C + std::size_t(j)] = beta[start + i] * kk * decay;
                qk[std::size_t(i) * C + std::size_t(j)] = qkv * qScale * decay;
            }
        }
        // Forward substitution: (I + strictly-lower A) U = beta v, (I + A) W = beta k exp(cum).
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
                const float* uj = U.data() + std::size_t(j) * std::size_t(dv);
                const float* wj = W.data() + std::size_t(j) * std::size_t(dk);
                for (std::int64_t d = 0; d < dv; ++d)
                    ui[d] -= a * uj[d];
                for (std::int64_t d = 0; d < dk; ++d)
                    wi[d] -= a * wj[d];
            }
        }
        // vNew = U - W S; out_i = exp(cum_i) q_i S + sum_{j<=i} qk[i][j] vNew_j.
        for (std::int64_t i = 0; i < n; ++i) {
            float* vn = vNew.data() + std::size_t(i) * std::size_t(dv);
            const float* ui = U.data() + std::size_t(i) * std::size_t(dv);
            const float* wi = W.data() + std::size_t(i) * std::size_t(dk);
            float* o = out + (start + i) * outStride;
            const float* qi = qc + i * qkStride;
            const float e = std::exp(cum[std::size_t(i)]) * qScale;
            for (std::int64_t d = 0; d < dv; ++d) {
                vn[d] = ui[d];
                o[d] = 0.0f;
            }
            for (std::int64_t r = 0; r < dk; ++r) {
                const float* srow = state + r * dv;
                const float wr = wi[r];
                const float qr = qi[r] * e;
                for (std::int64_t d = 0; d < dv; ++d) {
                    vn[d] -= wr * srow[d];
                    o[d] += qr * srow[d];
                }
            }
        }
        for (std::int64_t i = 0; i < n; ++i) {
            float* o = out + (start + i) * outStride;
            for (std::int64_t j = 0; j <= i; ++j) {
                const float a = qk[std::size_t(i) * C + std::size_t(j)];
                const float* vn = vNew.data() + std::size_t(j) * std::size_t(dv);
                for (std::int64_t d = 0; d < dv; ++d)
                    o[d] += a * vn[d];
            }
        }
        // S = S exp(cum_last) + sum_j k_j exp(cum_last - cum_j) vNew_j^T
        const float last = cum[std::size_t(n - 1)];
        const float chunkDecay = std::exp(last);
        for (std::int64_t i = 0; i < dk * dv; ++i)
            state[i] *= chunkDecay;
        for (std::int64_t j = 0; j < n; ++j) {
            const float* kj = kc + j * qkStride;
            const float e = std::exp(last - cum[std::size_t(j)]);
            const float* vn = vNew.data() + std::size_t(j) * std::size_t(dv);
            for (std::int64_t r = 0; r < dk; ++r) {
                const float kr = kj[r] * e;
                float* srow = state + r * dv;
                for (std::int64_t d = 0; d < dv; ++d)
                    srow[d] += kr * vn[d];
            }
        }
    }
}

} // namespace

// The vector versions need dk and dv in whole registers (every Qwen3.5/3.6 shape is).
void gatedDeltaRuleRecurrent(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride)
{
    const quant::CpuKernelPath path = quant::activeCpuKernelPath();
    if (path == quant::CpuKernelPath::Avx512 && dk % 16 == 0 && dv % 16 == 0)
        gatedDeltaRuleRecurrentAvx512(
            q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride);
    else if (path != quant::CpuKernelPath::Portable && dk % 8 == 0 && dv % 8 == 0)
        gatedDeltaRuleRecurrentAvx2(
            q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride);
    else
        gatedDeltaRuleRecurrentPortable(
            q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride);
}

void gatedDeltaRuleChunked(const float* q, const float* k, std::int64_t qkStride, const float* v,
    std::int64_t vStride, const float* g, const float* beta, std::int64_t nTokens, std::int64_t dk,
    std::int64_t dv, float* state, float* out, std::int64_t outStride, int chunk)
{
    const quant::CpuKernelPath path = quant::activeCpuKernelPath();
    if (path == quant::CpuKernelPath::Avx512 && dk % 16 == 0 && dv % 16 == 0)
        gatedDeltaRuleChunkedAvx512(
            q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride, chunk);
    else if (path != quant::CpuKernelPath::Portable && dk % 8 == 0 && dv % 8 == 0)
        gatedDeltaRuleChunkedAvx2(
            q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride, chunk);
    else
        gatedDeltaRuleChunkedPortable(
            q, k, qkStride, v, vStride, g, beta, nTokens, dk, dv, state, out, outStride, chunk);
}

namespace {

// Dot product with eight independent partial sums: the compiler turns them into vector lanes
// (a single running sum is a serial chain of adds it may not reorder), which makes the QK
// scores of a long prefill several times faster.
float dotEightWay(const float* a, const float* b, std::int64_t n)
{
    float partial[8] = {};
    std::int64_t d = 0;
    for (; d + 8 <= n; d += 8)
        for (int l = 0; l < 8; ++l)
            partial[l] += a[d + l] * b[d + l];
    float s = ((partial[0] + partial[4]) + (partial[1] + partial[5]))
        + ((partial[2] + partial[6]) + (partial[3] + partial[7]));
    for (; d < n; ++d)
        s += a[d] * b[d];
    return s;
}

} // namespace

void attentionHead(const float* q, std::int64_t qStride, std::int64_t nQ,
    std::int64_t firstQueryPos, const float* const* keys, const float* const* values,
    std::int64_t nKv, std::int64_t headDim, float scale, float* out, std::int64_t outStride,
    float* scratch)
{
    if (headDim % 8 == 0 && quant::activeCpuKernelPath() != quant::CpuKernelPath::Portable) {
        attentionHeadAvx2(q, qStride, nQ, firstQueryPos, keys, values, nKv, headDim, scale, out,
            outStride, scratch);
        return;
    }
    for (std::int64_t i = 0; i < nQ; ++i) {
        const float* qi = q + i * qStride;
        const std::int64_t seen = std::min(nKv, firstQueryPos + i + 1);
        for (std::int64_t j = 0; j < seen; ++j)
            scratch[j] = dotEightWay(qi, keys[j], headDim) * scale;
        softmax(scratch, seen);
        float* o = out + i * outStride;
        std::fill(o, o + headDim, 0.0f);
        for (std::int64_t j = 0; j < seen; ++j) {
            const float p = scratch[j];
            const float* vj = values[j];
            for (std::int64_t d = 0; d < headDim; ++d)
                o[d] += p * vj[d];
        }
    }
}

void attentionSharedKv(const float* q, std::int64_t qStride, std::int64_t nHeads,
    const float* const* keys, const float* const* values, std::int64_t nKv, std::int64_t headDim,
    float scale, float* out, std::int64_t outStride, float* scratch)
{
    if (headDim % 8 == 0 && quant::activeCpuKernelPath() != quant::CpuKernelPath::Portable) {
        attentionSharedKvAvx2(
            q, qStride, nHeads, keys, values, nKv, headDim, scale, out, outStride, scratch);
        return;
    }
    for (std::int64_t r = 0; r < nHeads; ++r)
        attentionHead(q + r * qStride, qStride, 1, nKv - 1, keys, values, nKv, headDim, scale,
            out + r * outStride, outStride, scratch);
}

bool allFinite(const float* x, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i]))
            return false;
    return true;
}

} // namespace cw::kernels::ops
