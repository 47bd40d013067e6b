#pragma once

#include <optional>
#include <vector>

namespace cw::heads {

// Platt scaling: p(correct | score) = 1 / (1 + exp(-(slope * logit(score) + intercept))),
// fitted on held-out (score, correct) pairs so that a finding's confidence is the share of
// such findings that were right, not the classifier's raw score.
struct PlattCalibration {
    float slope = 0.0f;
    float intercept = 0.0f;
    double probability(float score) const;
};

struct CalibrationSample {
    float score = 0.0f; // the classifier's probability for the candidate
    bool correct = false; // the candidate matched a gold span of the category
};

// Below this many held-out findings a fit says more about chance than about the category.
constexpr int kMinCalibrationSamples = 20;

// The maximum-likelihood fit with Platt's smoothed targets ((N+ + 1) / (N+ + 2) and
// 1 / (N- + 2)), by Newton's method; none with fewer than kMinCalibrationSamples samples.
std::optional<PlattCalibration> fitPlatt(const std::vector<CalibrationSample>& samples);

} // namespace cw::heads
