#include "app/heads/presence_model.h"

#include <algorithm>
#include <cassert>
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

// The penalty on standardised weights: enough to keep a fit on a few dozen positives sane.
constexpr double kL2 = 4.0;

using Matrix = std::vector<std::vector<double>>;

// Solves a x = b in place (Gaussian elimination with partial pivoting); false if singular.
bool solve(Matrix& a, std::vector<double>& b)
{
    const int n = int(b.size());
    for (int col = 0; col < n; ++col) {
        int pivot = col;
        for (int r = col + 1; r < n; ++r) {
            if (std::abs(a[size_t(r)][size_t(col)]) > std::abs(a[size_t(pivot)][size_t(col)]))
                pivot = r;
        }
        if (std::abs(a[size_t(pivot)][size_t(col)]) < 1e-12)
            return false;
        std::swap(a[size_t(col)], a[size_t(pivot)]);
        std::swap(b[size_t(col)], b[size_t(pivot)]);
        for (int r = col + 1; r < n; ++r) {
            const double f = a[size_t(r)][size_t(col)] / a[size_t(col)][size_t(col)];
            for (int c = col; c < n; ++c)
                a[size_t(r)][size_t(c)] -= f * a[size_t(col)][size_t(c)];
            b[size_t(r)] -= f * b[size_t(col)];
        }
    }
    for (int r = n - 1; r >= 0; --r) {
        for (int c = r + 1; c < n; ++c)
            b[size_t(r)] -= a[size_t(r)][size_t(c)] * b[size_t(c)];
        b[size_t(r)] /= a[size_t(r)][size_t(r)];
    }
    return true;
}

} // namespace

PresenceFeatures presenceFeatures(const std::vector<std::vector<float>>& scores, int k,
    const std::vector<int>& cued, const std::vector<int>& qualified)
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
    PresenceFeatures x = { clampedLogit(top[0]), clampedLogit(top[1]), clampedLogit(top[2]),
        float(std::log1p(double(above))), cuedBest >= 0.0f ? 1.0f : 0.0f,
        cuedBest >= 0.0f ? clampedLogit(cuedBest) : clampedLogit(0.0f) };
    if (!qualified.empty()) {
        float parent = 0.0f;
        for (const auto& row : scores) {
            for (int q : qualified)
                parent = std::max(parent, row[size_t(q)]);
        }
        x.push_back(clampedLogit(parent));
    }
    return x;
}

double PresenceModel::probability(const PresenceFeatures& x) const
{
    double z = bias;
    const size_t n = std::min(weights.size(), x.size());
    for (size_t j = 0; j < n; ++j)
        z += double(weights[j]) * double(x[j]);
    return sigmoid(z);
}

std::optional<PresenceModel> fitPresenceModel(const std::vector<PresenceSample>& samples)
{
    int positives = 0;
    for (const PresenceSample& s : samples)
        positives += s.present;
    if (samples.empty() || positives < kMinPresencePositives
        || int(samples.size()) - positives < kMinPresencePositives)
        return std::nullopt;
    const size_t features = samples.front().x.size();
    const size_t params = features + 1; // weights, then the bias
    // Standardise, so one penalty suits features of different scales.
    std::vector<double> mean(features, 0.0), scale(features, 0.0);
    for (const PresenceSample& s : samples) {
        assert(s.x.size() == features);
        for (size_t j = 0; j < features; ++j)
            mean[j] += s.x[j];
    }
    for (double& m : mean)
        m /= double(samples.size());
    for (const PresenceSample& s : samples) {
        for (size_t j = 0; j < features; ++j)
            scale[j] += (s.x[j] - mean[j]) * (s.x[j] - mean[j]);
    }
    for (double& v : scale)
        v = std::max(std::sqrt(v / double(samples.size())), 1e-3);
    std::vector<double> w(params, 0.0), z(params, 0.0);
    for (int iteration = 0; iteration < 30; ++iteration) {
        Matrix h(params, std::vector<double>(params, 0.0));
        std::vector<double> g(params, 0.0);
        for (size_t j = 0; j < features; ++j) {
            h[j][j] += kL2;
            g[j] += kL2 * w[j];
        }
        for (const PresenceSample& s : samples) {
            for (size_t j = 0; j < features; ++j)
                z[j] = (s.x[j] - mean[j]) / scale[j];
            z[features] = 1.0;
            double t = 0.0;
            for (size_t j = 0; j < params; ++j)
                t += w[j] * z[j];
            const double p = sigmoid(t);
            const double d = p - (s.present ? 1.0 : 0.0), v = std::max(p * (1.0 - p), 1e-9);
            for (size_t a = 0; a < params; ++a) {
                g[a] += d * z[a];
                const double vz = v * z[a];
                for (size_t b = a; b < params; ++b)
                    h[a][b] += vz * z[b];
            }
        }
        for (size_t a = 0; a < params; ++a) {
            for (size_t b = 0; b < a; ++b)
                h[a][b] = h[b][a];
        }
        std::vector<double> step = g;
        if (!solve(h, step))
            break;
        double change = 0.0;
        for (size_t j = 0; j < params; ++j) {
            w[j] -= step[j];
            change = std::max(change, std::abs(step[j]));
        }
        if (change < 1e-6)
            break;
    }
    // Back to raw features: w'x_std + b = sum (w_j / s_j) x_j + b - sum w_j m_j / s_j.
    PresenceModel m;
    double bias = w[features];
    m.weights.resize(features);
    for (size_t j = 0; j < features; ++j) {
        m.weights[j] = float(w[j] / scale[j]);
        bias -= w[j] * mean[j] / scale[j];
        if (!std::isfinite(m.weights[j]))
            return std::nullopt;
    }
    m.bias = float(bias);
    if (!std::isfinite(m.bias))
        return std::nullopt;
    return m;
}

} // namespace cw::heads
