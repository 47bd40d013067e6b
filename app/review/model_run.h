#pragma once

#include "app/review/review_types.h"

#include <QString>
#include <optional>

namespace cw {

// Where a review's model questions were answered and how fast: what the status bar and the
// report's footer show. Kept in the review's settings ("model_review"), so a review opened
// from the history shows the figures of its own run.
struct ModelRun {
    QString device; // "CPU (8 threads)", "NVIDIA H200 (cuda:0)", or a server's URL
    double seconds = 0.0; // the model review, from the first question to the last answer
    qint64 generatedTokens = 0;
    double tokensPerSecond() const { return seconds > 0 ? double(generatedTokens) / seconds : 0.0; }
};

// The run recorded in `review`; none for a review of the fast heads only (or one recorded
// before the device was kept).
std::optional<ModelRun> modelRunOf(const Review& review);
// Records `run` in review.settings["model_review"] beside what is already there.
void recordModelRun(Review& review, const ModelRun& run);
// "NVIDIA H200 (cuda:0) · 412.3 tokens/s · 2.9 s".
QString modelRunText(const ModelRun& run);

} // namespace cw
