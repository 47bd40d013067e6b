#include "tests/gpu/deltanet/delta_net_problem.h"

#include "kernels/cpu/ops/ops.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

namespace cw::test {

namespace ops = kernels::ops;
namespace cuda = kernels::cuda;

namespace {

void fillNormal(std::vector<float>& v, std::size_t n, std::mt19937& rng, float mean, float sd)
{
    std::normal_distribution<float> dist(mean, sd);
    v.resize(n);
    for (auto& x : v)
        x = dist(rng);
}

std::size_t convDimOf(const DeltaNetShape& s)
{
    return std::size_t(s.convDim());
}

} // namespace

int DeltaNetStepData::rows() const
{
    int total = 0;
    for (int n : lengths)
        total += n;
    return total;
}

DeltaNetLayerData randomLayer(const DeltaNetShape& shape, int slots, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    DeltaNetLayerData d;
    d.shape = shape;
    d.slots = slots;
    const std::size_t convDim = convDimOf(shape);
    fillNormal(d.convWeight, convDim * std::size_t(shape.convKernel), rng, 0.0f, 0.5f);
    fillNormal(d.dtBias, std::size_t(shape.valueHeads), rng, 0.0f, 0.5f);
    std::uniform_real_distribution<float> logA(-1.5f, 0.7f);
    d.negA.resize(std::size_t(shape.valueHeads));
    for (auto& a : d.negA)
        a = -std::exp(logA(rng));
    fillNormal(d.normWeight, std::size_t(shape.valueDim), rng, 1.0f, 0.2f);
    fillNormal(d.convState, std::size_t(slots) * convDim * std::size_t(shape.convKernel - 1), rng,
        0.0f, 1.0f);
    fillNormal(d.recurrentState,
        std::size_t(slots) * std::size_t(shape.valueHeads) * std::size_t(shape.keyDim)
            * std::size_t(shape.valueDim),
        rng, 0.0f, 0.3f);
    return d;
}

DeltaNetStepData randomStep(const DeltaNetShape& shape, std::vector<int> lengths,
    std::vector<int> slots, std::uint32_t seed, int maxTokensPerSequence)
{
    std::mt19937 rng(seed);
    DeltaNetStepData s;
    s.lengths = std::move(lengths);
    s.slots = std::move(slots);
    int longest = 0;
    for (int n : s.lengths)
        longest = std::max(longest, n);
    s.maxTokensPerSequence = std::max(longest, maxTokensPerSequence);
    const std::size_t rows = std::size_t(s.rows());
    const std::size_t nV = std::size_t(shape.valueHeads);
    fillNormal(s.qkv, rows * convDimOf(shape), rng, 0.0f, 1.0f);
    fillNormal(s.alpha, rows * nV, rng, 0.0f, 1.0f);
    fillNormal(s.beta, rows * nV, rng, 0.0f, 1.0f);
    fillNormal(s.z, rows * nV * std::size_t(shape.valueDim), rng, 0.0f, 1.0f);
    return s;
}

DeltaNetStepResult cpuStep(DeltaNetLayerData& layer, const DeltaNetStepData& step)
{
    const DeltaNetShape& sh = layer.shape;
    const std::int64_t T = step.rows();
    const std::int64_t nK = sh.keyHeads, nV = sh.valueHeads, dk = sh.keyDim, dv = sh.valueDim;
    const std::int64_t convDim = sh.convDim(), valueDim = nV * dv;
    const int kernel = sh.convKernel;
    const std::size_t convStateSize = std::size_t(convDim) * std::size_t(kernel - 1);
    const std::size_t headState = std::size_t(dk * dv);

    DeltaNetStepResult r;
    r.g = step.alpha;
    r.beta = step.beta;
    std::vector<float> conv(std::size_t(T * convDim));
    std::int64_t row0 = 0;
    for (std::size_t s = 0; s < step.lengths.size(); ++s) {
        const std::int64_t n = step.lengths[s];
        ops::causalConv1dSilu(step.qkv.data() + row0 * convDim, convDim, n, convDim,
            layer.convWeight.data(), kernel,
            layer.convState.data() + std::size_t(step.slots[s]) * convStateSize,
            conv.data() + row0 * convDim, convDim);
        row0 += n;
    }
    for (std::int64_t t = 0; t < T; ++t) {
        float* row = conv.data() + t * convDim;
        for (std::int64_t h = 0; h < 2 * nK; ++h)
            ops::l2Normalize(row + h * dk, dk, 1e-6f);
        for (std::int64_t j = 0; j < nV; ++j) {
            const std::size_t i = std::size_t(t * nV + j);
            r.g[i]
                = layer.negA[std::size_t(j)] * ops::softplus(r.g[i] + layer.dtBias[std::size_t(j)]);
            r.beta[i] = ops::sigmoid(r.beta[i]);
        }
    }
    r.core.assign(std::size_t(T * valueDim), 0.0f);
    row0 = 0;
    for (std::size_t s = 0; s < step.lengths.size(); ++s) {
        const std::int64_t n = step.lengths[s];
        for (std::int64_t j = 0; j < nV && n > 0; ++j) {
            const std::int64_t kh = sh.valueHeadsTiled ? j % nK : j / (nV / nK);
            std::vector<float> g(static_cast<std::size_t>(n)), beta(static_cast<std::size_t>(n));
            for (std::int64_t i = 0; i < n; ++i) {
                g[std::size_t(i)] = r.g[std::size_t((row0 + i) * nV + j)];
                beta[std::size_t(i)] = r.beta[std::size_t((row0 + i) * nV + j)];
            }
            const float* base = conv.data() + row0 * convDim;
            const float* qh = base + kh * dk;
            const float* kk = base + nK * dk + kh * dk;
            const float* vv = base + 2 * nK * dk + j * dv;
            float* state = layer.recurrentState.data()
                + (std::size_t(step.slots[s]) * std::size_t(nV) + std::size_t(j)) * headState;
            float* o = r.core.data() + row0 * valueDim + j * dv;
            if (n == 1)
                ops::gatedDeltaRuleRecurrent(qh, kk, convDim, vv, convDim, g.data(), beta.data(), n,
                    dk, dv, state, o, valueDim);
            else
                ops::gatedDeltaRuleChunked(qh, kk, convDim, vv, convDim, g.data(), beta.data(), n,
                    dk, dv, state, o, valueDim);
        }
        row0 += n;
    }
    for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t j = 0; j < nV; ++j) {
            float* o = r.core.data() + t * valueDim + j * dv;
            ops::rmsNorm(o, layer.normWeight.data(), dv, sh.eps, o);
            ops::siluMul(o, step.z.data() + t * valueDim + j * dv, dv);
        }
    r.convState = layer.convState;
    r.recurrentState = layer.recurrentState;
    return r;
}

namespace {

template <typename T> cudaError_t toDevice(T* dst, const std::vector<T>& src)
{
    return cudaMemcpy(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice);
}

template <typename T> cudaError_t toHost(std::vector<T>& dst, const T* src, std::size_t n)
{
    dst.resize(n);
    return cudaMemcpy(dst.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost);
}

template <typename T> cudaError_t allocCopy(T*& dst, const std::vector<T>& src)
{
    cudaError_t err = cudaMalloc(
        reinterpret_cast<void**>(&dst), std::max<std::size_t>(1, src.size()) * sizeof(T));
    return err != cudaSuccess ? err : toDevice(dst, src);
}

constexpr int kEarlierContext = 100;

// The CPU's conv states (per slot and channel the last kernel-1 inputs, oldest first) as the
// device's rings (kernel entries, input position p at p mod kernel) for slots whose next
// position is pos[slot], and back.
std::vector<float> convRings(
    const std::vector<float>& shifted, const DeltaNetShape& shape, const std::vector<int>& pos)
{
    const int kernel = shape.convKernel, hist = kernel - 1;
    const std::size_t channels = std::size_t(pos.size()) * std::size_t(shape.convDim());
    std::vector<float> ring(channels * std::size_t(kernel), 0.0f);
    for (std::size_t ch = 0; ch < channels; ++ch) {
        const int p0 = pos[ch / std::size_t(shape.convDim())];
        for (int m = 0; m < hist; ++m)
            ring[ch * std::size_t(kernel)
                + std::size_t(kernels::cuda::deltanet::convRingIndex(p0 - hist + m, kernel))]
                = shifted[ch * std::size_t(hist) + std::size_t(m)];
    }
    return ring;
}

std::vector<float> convShifted(
    const std::vector<float>& ring, const DeltaNetShape& shape, const std::vector<int>& pos)
{
    const int kernel = shape.convKernel, hist = kernel - 1;
    const std::size_t channels = std::size_t(pos.size()) * std::size_t(shape.convDim());
    std::vector<float> shifted(channels * std::size_t(hist));
    for (std::size_t ch = 0; ch < channels; ++ch) {
        const int p0 = pos[ch / std::size_t(shape.convDim())];
        for (int m = 0; m < hist; ++m)
            shifted[ch * std::size_t(hist) + std::size_t(m)] = ring[ch * std::size_t(kernel)
                + std::size_t(kernels::cuda::deltanet::convRingIndex(p0 - hist + m, kernel))];
    }
    return shifted;
}

#define CW_TRY(expr)                                                                               \
    do {                                                                                           \
        const cudaError_t err_ = (expr);                                                           \
        if (err_ != cudaSuccess)                                                                   \
            return err_;                                                                           \
    } while (0)

} // namespace

DeviceDeltaNet::DeviceDeltaNet(const DeltaNetLayerData& layer)
    : m_shape(layer.shape)
    , m_slots(layer.slots)
{
    // Failures surface as errors of the first run(): every pointer left null fails there.
    m_slotPos.assign(std::size_t(m_slots), kEarlierContext);
    const std::vector<int> zeros(std::size_t(m_slots) * std::size_t(m_shape.valueHeads), 0);
    if (allocCopy(m_convWeight, layer.convWeight) != cudaSuccess
        || allocCopy(m_dtBias, layer.dtBias) != cudaSuccess
        || allocCopy(m_negA, layer.negA) != cudaSuccess
        || allocCopy(m_normWeight, layer.normWeight) != cudaSuccess
        || allocCopy(m_convState, convRings(layer.convState, layer.shape, m_slotPos)) != cudaSuccess
        || allocCopy(m_recurrent, layer.recurrentState) != cudaSuccess
        || allocCopy(m_counters, zeros) != cudaSuccess)
        std::fprintf(stderr, "DeviceDeltaNet: allocation failed\n");
}

DeviceDeltaNet::~DeviceDeltaNet()
{
    for (void* p : { static_cast<void*>(m_convWeight), static_cast<void*>(m_dtBias),
             static_cast<void*>(m_negA), static_cast<void*>(m_normWeight),
             static_cast<void*>(m_convState), static_cast<void*>(m_recurrent),
             static_cast<void*>(m_qkv), static_cast<void*>(m_alpha), static_cast<void*>(m_beta),
             static_cast<void*>(m_z), static_cast<void*>(m_core), static_cast<void*>(m_ints),
             static_cast<void*>(m_counters), static_cast<void*>(m_scratch) })
        if (p)
            cudaFree(p);
}

template <typename T>
cudaError_t DeviceDeltaNet::reserve(T*& p, std::size_t& capacity, std::size_t count)
{
    count = std::max<std::size_t>(count, 1);
    if (count <= capacity)
        return cudaSuccess;
    if (p)
        CW_TRY(cudaFree(p));
    p = nullptr;
    capacity = 0;
    CW_TRY(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)));
    capacity = count;
    return cudaSuccess;
}

cudaError_t DeviceDeltaNet::upload(const DeltaNetStepData& step)
{
    const int T = step.rows(), S = int(step.lengths.size());
    CW_TRY(reserve(m_qkv, m_qkvCap, step.qkv.size()));
    CW_TRY(reserve(m_alpha, m_alphaCap, step.alpha.size()));
    CW_TRY(reserve(m_beta, m_betaCap, step.beta.size()));
    CW_TRY(reserve(m_z, m_zCap, step.z.size()));
    CW_TRY(reserve(m_core, m_coreCap, step.z.size()));
    CW_TRY(toDevice(m_qkv, step.qkv));
    CW_TRY(toDevice(m_alpha, step.alpha));
    CW_TRY(toDevice(m_beta, step.beta));
    CW_TRY(toDevice(m_z, step.z));

    // [rowSeq T][rowPos T][tokens T][seqRow0 S][seqTokens S][seqPos0 S][stateSlots S]
    std::vector<std::int32_t> ints;
    std::vector<std::int32_t> seqRow0;
    for (int s = 0, row = 0; s < S; row += step.lengths[std::size_t(s)], ++s)
        seqRow0.push_back(row);
    for (int s = 0; s < S; ++s)
        for (int i = 0; i < step.lengths[std::size_t(s)]; ++i)
            ints.push_back(s);
    int lastPos = 0;
    for (int s = 0; s < S; ++s)
        for (int i = 0; i < step.lengths[std::size_t(s)]; ++i) {
            ints.push_back(m_slotPos[std::size_t(step.slots[std::size_t(s)])] + i);
            lastPos = std::max(lastPos, ints.back());
        }
    for (int t = 0; t < T; ++t)
        ints.push_back(t);
    ints.insert(ints.end(), seqRow0.begin(), seqRow0.end());
    ints.insert(ints.end(), step.lengths.begin(), step.lengths.end());
    for (int s = 0; s < S; ++s)
        ints.push_back(m_slotPos[std::size_t(step.slots[std::size_t(s)])]);
    ints.insert(ints.end(), step.slots.begin(), step.slots.end());
    CW_TRY(reserve(m_ints, m_intsCap, ints.size()));
    CW_TRY(toDevice(m_ints, ints));

    m_layout = {};
    m_layout.rows = T;
    m_layout.sequences = S;
    m_layout.maxTokensPerSequence = step.maxTokensPerSequence;
    m_layout.maxContext = lastPos + 1 + step.maxTokensPerSequence;
    m_layout.rowSeq = m_ints;
    m_layout.rowPos = m_ints + T;
    m_layout.tokens = m_ints + 2 * T;
    m_layout.seqRow0 = m_ints + 3 * T;
    m_layout.seqTokens = m_ints + 3 * T + S;
    m_layout.seqPos0 = m_ints + 3 * T + 2 * S;
    m_layout.stateSlots = m_ints + 3 * T + 3 * S;

    m_scratchBytes = cuda::deltaNetScratchBytes(m_shape, m_layout);
    CW_TRY(reserve(m_scratch, m_scratchCap, m_scratchBytes));
    return cudaSuccess;
}

cudaError_t DeviceDeltaNet::enqueue(
    cudaStream_t stream, const kernels::cuda::deltanet::Tuning& tuning)
{
    return cuda::deltanet::gatedDeltaNetTuned(m_qkv, m_alpha, m_beta, m_z, m_convWeight, m_dtBias,
        m_negA, m_normWeight, m_shape, m_layout, states(), m_core, scratch(), tuning, stream);
}

cudaError_t DeviceDeltaNet::run(const DeltaNetStepData& step, DeltaNetStepResult* result,
    const kernels::cuda::deltanet::Tuning* tuning)
{
    CW_TRY(upload(step));
    const std::size_t coreCount = step.z.size();
    CW_TRY(cudaMemset(m_core, 0xff, coreCount * sizeof(float))); // NaN
    CW_TRY(cudaMemset(m_scratch, 0xff, m_scratchBytes));
    const cudaError_t launched = tuning
        ? enqueue(nullptr, *tuning)
        : cuda::gatedDeltaNet(m_qkv, m_alpha, m_beta, m_z, m_convWeight, m_dtBias, m_negA,
            m_normWeight, m_shape, m_layout, states(), m_core, scratch(), nullptr);
    CW_TRY(launched);
    CW_TRY(cudaDeviceSynchronize());
    CW_TRY(cudaGetLastError());
    for (std::size_t s = 0; s < step.lengths.size(); ++s)
        m_slotPos[std::size_t(step.slots[s])] += step.lengths[s];
    if (!result)
        return cudaSuccess;
    CW_TRY(toHost(result->core, m_core, coreCount));
    CW_TRY(toHost(result->g, m_alpha, step.alpha.size()));
    CW_TRY(toHost(result->beta, m_beta, step.beta.size()));
    return downloadStates(result->convState, result->recurrentState);
}

cudaError_t DeviceDeltaNet::downloadStates(
    std::vector<float>& conv, std::vector<float>& recurrent) const
{
    const std::size_t convDim = std::size_t(m_shape.convDim());
    const std::size_t heads = std::size_t(m_slots) * std::size_t(m_shape.valueHeads);
    std::vector<float> rings;
    CW_TRY(toHost(
        rings, m_convState, std::size_t(m_slots) * convDim * std::size_t(m_shape.convKernel)));
    conv = convShifted(rings, m_shape, m_slotPos);
    CW_TRY(toHost(recurrent, m_recurrent,
        heads * std::size_t(m_shape.keyDim) * std::size_t(m_shape.valueDim)));
    return cudaSuccess;
}

std::string ErrorFigures::text() const
{
    char buf[96];
    std::snprintf(buf, sizeof buf, "rel %.3g, max abs %.3g", relative, maxAbs);
    return buf;
}

ErrorFigures compare(const std::vector<float>& got, const std::vector<float>& want)
{
    ErrorFigures e;
    if (got.size() != want.size()) {
        e.relative = e.maxAbs = std::numeric_limits<double>::infinity();
        return e;
    }
    double diff = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double d = double(got[i]) - double(want[i]);
        if (!std::isfinite(d)) {
            e.relative = e.maxAbs = std::numeric_limits<double>::infinity();
            return e;
        }
        diff += d * d;
        norm += double(want[i]) * double(want[i]);
        e.maxAbs = std::max(e.maxAbs, std::fabs(d));
    }
    e.relative = norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    return e;
}

} // namespace cw::test
