#include "app/heads/score_calibration.h"

#include <algorithm>
#include <cmath>

namespace cw::heads {

namespace {

double logit(float score)
{
    const double p = std::clamp(double(score), 1e-6, 1.0 - 1e-6);
    return std::log(p / (1.0 - p));
}

double sigmoid(double z)
{
    return z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
}

} // namespace

double PlattCalibration::probability(float score) const
{
    return sigmoid(double(slope) * logit(score) + double(intercept));
}

std::optional<PlattCalibration> fitPlatt(const std::vector<CalibrationSample>& samples)
{
    if (int(samples.size()) < kMinCalibrationSamples)
        return std::nullopt;
    double positives = 0;
    for (const CalibrationSample& s : samples)
        positives += s.correct;
    const double negatives = double(samples.size()) - positives;
    const double high = (positives + 1.0) / (positives + 2.0);
    const double low = 1.0 / (negatives + 2.0);
    std::vector<double> z(samples.size()), t(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
        z[i] = logit(samples[i].score);
        t[i] = samples[i].correct ? high : low;
    }
    // Newton's method on the cross-entropy in (a, b), with a step halved until it helps.
    double a = 1.0, b = 0.0;
    const auto loss = [&](double sa, double sb) {
        double l = 0.0;
        for (size_t i = 0; i < z.size(); ++i) {
            const double p = std::clamp(sigmoid(sa * z[i] + sb), 1e-12, 1.0 - 1e-12);
            l -= t[i] * std::log(p) + (1.0 - t[i]) * std::log(1.0 - p);
        }
        return l;
    };
    double current = loss(a, b);
    for (int iteration = 0; iteration < 100; ++iteration) {
        double ga = 0, gb = 0, haa = 1e-9, hab = 0, hbb = 1e-9;
        for (size_t i = 0; i < z.size(); ++i) {
            const double p = sigmoid(a * z[i] + b);
            const double d = p - t[i], w = p * (1.0 - p);
            ga += d * z[i], gb += d;
            haa += w * z[i] * z[i], hab += w * z[i], hbb += w;
        }
        const double det = haa * hbb - hab * hab;
        if (std::abs(det) < 1e-18)
            break;
        const double da = (hbb * ga - hab * gb) / det, db = (haa * gb - hab * ga) / det;
        double step = 1.0, next = current;
        while (step > 1e-6) {
            next = loss(a - step * da, b - step * db);
            if (next < current)
                break;
            step /= 2;
        }
        if (step <= 1e-6)
            break;
        a -= step * da, b -= step * db;
        const bool converged = current - next < 1e-9;
        current = next;
        if (converged)
            break;
    }
    return PlattCalibration { float(a), float(b) };
}

} // namespace cw::heads
