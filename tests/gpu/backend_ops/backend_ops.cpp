// The comparison, timing and helpers every backend-ops case shares.
#include "tests/gpu/backend_ops/backend_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cw::backend_ops {

const char* precisionName(GemmPrecision precision)
{
    switch (precision) {
    case GemmPrecision::Float32:
        return "f32";
    case GemmPrecision::TensorFloat32:
        return "tf32";
    case GemmPrecision::BFloat16:
        return "bf16";
    }
    return "?";
}

std::string Comparison::message() const
{
    char text[512];
    if (exact) {
        std::snprintf(text, sizeof text,
            "%s: %lld of %zu elements differ; first at %s: got %.9g, want %.9g", output.c_str(),
            static_cast<long long>(mismatches), count, worstAt.c_str(), worstGot, worstWant);
        return text;
    }
    std::snprintf(text, sizeof text,
        "%s (%zu values): max|err| %.4g over max|want| %.4g = %.3g (tolerance %.3g), "
        "||err||/||want|| %.3g (tolerance %s), non-finite %lld; worst at %s: got %.9g, want %.9g",
        output.c_str(), count, maxAbs, scale, scaled, tolerance.maxScaled, relativeL2,
        tolerance.relativeL2 > 0 ? std::to_string(tolerance.relativeL2).c_str() : "-",
        static_cast<long long>(nonFinite), worstAt.c_str(), worstGot, worstWant);
    return text;
}

CaseContext::CaseContext(cudaStream_t stream, cublasHandle_t cublas, kernels::ThreadPool* pool,
    bool perf, std::uint32_t seed)
    : m_stream(stream)
    , m_cublas(cublas)
    , m_pool(pool)
    , m_perf(perf)
    , m_rng(seed)
{
}

bool CaseContext::check(const std::string& output, const std::vector<float>& got,
    const std::vector<float>& want, Tolerance tolerance,
    const std::function<std::string(std::size_t)>& where, double scaleFloor)
{
    Comparison c;
    c.output = output;
    c.count = want.size();
    c.tolerance = tolerance;
    if (got.size() != want.size()) {
        c.ok = false;
        c.worstAt
            = "size " + std::to_string(got.size()) + " instead of " + std::to_string(want.size());
        m_comparisons.push_back(c);
        return false;
    }
    double diff2 = 0.0, norm2 = 0.0;
    std::size_t worst = 0;
    bool worstIsNonFinite = false;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double w = want[i], g = got[i];
        c.scale = std::max(c.scale, std::fabs(w));
        norm2 += w * w;
        if (!std::isfinite(g)) {
            if (std::isfinite(w)) {
                if (c.nonFinite++ == 0 && !worstIsNonFinite) {
                    worst = i;
                    worstIsNonFinite = true;
                }
            }
            continue;
        }
        const double d = std::fabs(g - w);
        diff2 += d * d;
        if (d > c.maxAbs) {
            c.maxAbs = d;
            if (!worstIsNonFinite)
                worst = i;
        }
    }
    c.scale = std::max(c.scale, scaleFloor);
    norm2 = std::max(norm2, double(want.size()) * scaleFloor * scaleFloor);
    c.scaled = c.scale > 0 ? c.maxAbs / c.scale : c.maxAbs;
    c.relativeL2 = norm2 > 0 ? std::sqrt(diff2 / norm2) : std::sqrt(diff2);
    if (c.nonFinite) {
        c.scaled = INFINITY;
        c.relativeL2 = INFINITY;
    }
    if (!want.empty()) {
        c.worstAt = where ? where(worst) : "element " + std::to_string(worst);
        c.worstGot = got[worst];
        c.worstWant = want[worst];
    }
    c.ok = c.nonFinite == 0 && c.scaled <= tolerance.maxScaled
        && (tolerance.relativeL2 <= 0 || c.relativeL2 <= tolerance.relativeL2);
    m_comparisons.push_back(c);
    return c.ok;
}

bool CaseContext::checkExact(const std::string& output, const std::vector<std::int32_t>& got,
    const std::vector<std::int32_t>& want, const std::function<std::string(std::size_t)>& where,
    std::int64_t allowed)
{
    Comparison c;
    c.output = output;
    c.exact = true;
    c.count = want.size();
    if (got.size() != want.size()) {
        c.ok = false;
        c.mismatches = std::int64_t(std::max(got.size(), want.size()));
        c.worstAt
            = "size " + std::to_string(got.size()) + " instead of " + std::to_string(want.size());
        m_comparisons.push_back(c);
        return false;
    }
    bool first = true;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (got[i] == want[i])
            continue;
        ++c.mismatches;
        if (first) {
            c.worstAt = where ? where(i) : "element " + std::to_string(i);
            c.worstGot = got[i];
            c.worstWant = want[i];
            first = false;
        }
    }
    c.ok = c.mismatches <= allowed;
    c.scaled = want.empty() ? 0.0 : double(c.mismatches) / double(want.size());
    m_comparisons.push_back(c);
    return c.ok;
}

void CaseContext::measure(double bytes, const std::function<cudaError_t(cudaStream_t)>& launch)
{
    if (!m_perf)
        return;
    m_bytes = bytes;
    cudaEvent_t start = nullptr, stop = nullptr;
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
        m_timingError = "cudaEventCreate failed";
        return;
    }
    cudaError_t e = launch(m_stream); // warm-up: first-launch costs, caches
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(m_stream);
    // Enough launches for a stable median, at most ~0.2 s of GPU time.
    std::vector<float> times;
    float firstMs = 0.0f;
    for (int i = 0; i < 25 && e == cudaSuccess; ++i) {
        cudaEventRecord(start, m_stream);
        e = launch(m_stream);
        cudaEventRecord(stop, m_stream);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(stop);
        float ms = 0.0f;
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, start, stop);
        times.push_back(ms);
        if (i == 0)
            firstMs = ms;
        if (i >= 4 && firstMs * float(i + 1) > 200.0f)
            break;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (e != cudaSuccess) {
        m_timingError = cudaGetErrorString(e);
        return;
    }
    std::sort(times.begin(), times.end());
    m_microseconds = 1000.0 * double(times[times.size() / 2]);
}

std::vector<float> randomFloats(std::size_t n, std::mt19937& rng, float scale)
{
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) {
        f = normal(rng);
        if (f == 0.0f)
            f = 0.25f * scale;
    }
    return v;
}

std::vector<float> uniformFloats(std::size_t n, std::mt19937& rng, float lo, float hi)
{
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& f : v)
        f = dist(rng);
    return v;
}

std::function<std::string(std::size_t)> rowsOf(
    std::int64_t width, const char* rowName, const char* columnName)
{
    return [width, rowName, columnName](std::size_t i) {
        const std::int64_t w = std::max<std::int64_t>(width, 1);
        return std::string(rowName) + " " + std::to_string(std::int64_t(i) / w) + ", " + columnName
            + " " + std::to_string(std::int64_t(i) % w);
    };
}

} // namespace cw::backend_ops
