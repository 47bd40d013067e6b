#include "app/heads/presence_model.h"

#include <algorithm>
#include <cmath>

namespace cw::heads {

namespace {

float clampedLogit(float score)
{
    const double p = std::clamp(double(score), 1e-4, 1.0 - 1e-4);
    return float(std::log(p / (1.0 - p)));
}

double sigmoid(double z)
{
    return z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
}

constexpr int kParams = kPresenceFeatures + 1; // weights, then the bias
// The penalty on standardised weights: enough to keep a fit on a few dozen positives sane.
constexpr double kL2 = 1.0;

// Solves a x = b in place (Gaussian elimination with partial pivoting); false if singular.
bool solve(std::array<std::array<double, kParams>, kParams>& a, std::array<double, kParams>& b)
{
    for (int col = 0; col < kParams; ++col) {
        int pivot = col;
        for (int r = col + 1; r < kParams; ++r) {
            if (std::abs(a[r][col]) > std::abs(a[pivot][col]))
                pivot = r;
        }
        if (std::abs(a[pivot][col]) < 1e-12)
            return false;
        std::swap(a[col], a[pivot]);
        std::swap(b[col], b[pivot]);
        for (int r = col + 1; r < kParams; ++r) {
            const double f = a[r][col] / a[col][col];
            for (int c = col; c < kParams; ++c)
                a[r][c] -= f * a[col][c];
            b[r] -= f * b[col];
        }
    }
    for (int r = kParams - 1; r >= 0; --r) {
        for (int c = r + 1; c < kParams; ++c)
            b[r] -= a[r][c] * b[c];
        b[r] /= a[r][r];
    }
    return true;
}

} // namespace

PresenceFeatures presenceFeatures(
    const std::vector<std::vector<float>>& scores, int k, const std::vector<int>& cued)
{
    float top[3] = { 0.0f, 0.0f, 0.0f };
    int above = 0;
    for (const auto& row : scores) {
        const float s = row[size_t(k)];
        above += s >= 0.5f;
        if (s > top[2]) {
            top[2] = s;
            if (top[2] > top[1])
                std::swap(top[1], top[2]);
            if (top[1] > top[0])
                std::swap(top[0], top[1]);
        }
    }
    float cuedBest = -1.0f;
    for (int i : cued)
        cuedBest = std::max(cuedBest, scores[size_t(i)][size_t(k)]);
    return { clampedLogit(top[0]), clampedLogit(top[1]), clampedLogit(top[2]),
        float(std::log1p(double(above))), cuedBest >= 0.0f ? 1.0f : 0.0f,
        cuedBest >= 0.0f ? clampedLogit(cuedBest) : clampedLogit(0.0f) };
}

double PresenceModel::probability(const PresenceFeatures& x) const
{
    double z = bias;
    for (int j = 0; j < kPresenceFeatures; ++j)
        z += double(weights[size_t(j)]) * double(x[size_t(j)]);
    return sigmoid(z);
}

std::optional<PresenceModel> fitPresenceModel(const std::vector<PresenceSample>& samples)
{
    int positives = 0;
    for (const PresenceSample& s : samples)
        positives += s.present;
    if (positives < kMinPresencePositives
        || int(samples.size()) - positives < kMinPresencePositives)
        return std::nullopt;
    // Standardise, so one penalty suits features of different scales.
    std::array<double, kPresenceFeatures> mean {}, scale {};
    for (const PresenceSample& s : samples) {
        for (int j = 0; j < kPresenceFeatures; ++j)
            mean[size_t(j)] += s.x[size_t(j)];
    }
    for (double& m : mean)
        m /= double(samples.size());
    for (const PresenceSample& s : samples) {
        for (int j = 0; j < kPresenceFeatures; ++j) {
            const double d = s.x[size_t(j)] - mean[size_t(j)];
            scale[size_t(j)] += d * d;
        }
    }
    for (double& v : scale)
        v = std::max(std::sqrt(v / double(samples.size())), 1e-3);
    std::array<double, kParams> w {};
    std::array<double, kParams> z {};
    for (int iteration = 0; iteration < 50; ++iteration) {
        std::array<std::array<double, kParams>, kParams> h {};
        std::array<double, kParams> g {};
        for (int j = 0; j < kPresenceFeatures; ++j) {
            h[size_t(j)][size_t(j)] += kL2;
            g[size_t(j)] += kL2 * w[size_t(j)];
        }
        for (const PresenceSample& s : samples) {
            for (int j = 0; j < kPresenceFeatures; ++j)
                z[size_t(j)] = (s.x[size_t(j)] - mean[size_t(j)]) / scale[size_t(j)];
            z[kPresenceFeatures] = 1.0;
            double t = 0.0;
            for (int j = 0; j < kParams; ++j)
                t += w[size_t(j)] * z[size_t(j)];
            const double p = sigmoid(t);
            const double d = p - (s.present ? 1.0 : 0.0), v = std::max(p * (1.0 - p), 1e-9);
            for (int a = 0; a < kParams; ++a) {
                g[size_t(a)] += d * z[size_t(a)];
                for (int b = 0; b < kParams; ++b)
                    h[size_t(a)][size_t(b)] += v * z[size_t(a)] * z[size_t(b)];
            }
        }
        std::array<double, kParams> step = g;
        if (!solve(h, step))
            break;
        double change = 0.0;
        for (int j = 0; j < kParams; ++j) {
            w[size_t(j)] -= step[size_t(j)];
            change = std::max(change, std::abs(step[size_t(j)]));
        }
        if (change < 1e-6)
            break;
    }
    // Back to raw features: w'x_std + b = sum (w_j / s_j) x_j + b - sum w_j m_j / s_j.
    PresenceModel m;
    double bias = w[kPresenceFeatures];
    for (int j = 0; j < kPresenceFeatures; ++j) {
        m.weights[size_t(j)] = float(w[size_t(j)] / scale[size_t(j)]);
        bias -= w[size_t(j)] * mean[size_t(j)] / scale[size_t(j)];
    }
    m.bias = float(bias);
    for (float v : m.weights) {
        if (!std::isfinite(v))
            return std::nullopt;
    }
    if (!std::isfinite(m.bias))
        return std::nullopt;
    return m;
}

} // namespace cw::heads
