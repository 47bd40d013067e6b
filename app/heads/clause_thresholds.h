#pragma once

#include "app/heads/clause_model.h"
#include "app/heads/clause_trainer.h"

#include <vector>

namespace cw::heads {

// Scores of one training contract from a model that did not see it.
struct HeldOutScores {
    int contract = 0; // index into the prepared contracts
    std::vector<std::vector<float>> scores; // [candidate][model category]
};

// `model` with each category's thresholds chosen on the held-out scores: the presence
// threshold (on the contract's best candidate) for contract-level F1, then the span
// threshold for span-level F1 among the contracts that pass it. Without `presenceCues`
// the cue route stays off.
ClauseModel withThresholds(const ClauseModel& model, const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOutScores>& held, bool presenceCues = true);

} // namespace cw::heads
