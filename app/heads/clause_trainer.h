#pragma once

#include "app/heads/clause_model.h"
#include "app/heads/cuad_dataset.h"

#include <QStringList>
#include <cstdint>
#include <functional>
#include <vector>

namespace cw::heads {

// A labelled contract turned into what training needs: candidates, their features, and
// for each category the candidates matching each gold span.
struct PreparedContract {
    const LabelledContract* source = nullptr;
    QList<ClauseCandidate> candidates;
    std::vector<FeatureVector> features;
    std::vector<uint64_t> labels; // bit k: candidate matches a gold span of category k
    uint64_t present = 0; // bit k: lawyers marked category k present
    QList<qsizetype> nonSpace; // nonSpacePrefix(text)
    // goldMatches[k][g]: candidates matching gold span g of category k.
    std::vector<std::vector<std::vector<int>>> goldMatches;
};

struct TrainingOptions {
    uint32_t hashBits = kDefaultHashBits;
    int epochs = 6;
    float learningRate = 0.5f;
    int thresholdFolds = 3; // inner folds for choosing thresholds
    size_t keepWeights = 6000; // strongest weights kept per category
    uint32_t seed = 17;
};

PreparedContract prepareContract(const LabelledContract& contract, uint32_t hashBits);

// Trains the model on `train` (indices into `contracts`) and picks thresholds by inner
// cross-validation on those contracts only. `log` gets one line per stage.
ClauseModel trainClauseModel(const std::vector<PreparedContract>& contracts,
    const std::vector<int>& train, const TrainingOptions& options,
    const std::function<void(const QString&)>& log = {});

// Per-candidate probabilities [candidate][category] for one prepared contract.
std::vector<std::vector<float>> scoreContract(
    const ClauseModel& model, const PreparedContract& contract);

} // namespace cw::heads
