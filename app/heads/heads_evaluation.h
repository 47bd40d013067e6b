#pragma once

#include "app/heads/clause_trainer.h"
#include "engine/common/result.h"

#include <QJsonObject>
#include <QString>
#include <functional>
#include <vector>

namespace cw::heads {

struct CategoryScore {
    QString category;
    int truePositives = 0, falsePositives = 0, falseNegatives = 0; // contract level
    long spanPredicted = 0, spanCorrect = 0, spanGold = 0, spanFound = 0;
    double precision() const;
    double recall() const;
    double f1() const;
};

struct EvaluationResult {
    int contracts = 0;
    int folds = 0;
    QList<CategoryScore> categories;
    double macroF1 = 0.0;
    double spanPrecision = 0.0, spanRecall = 0.0, spanF1 = 0.0;
    int lawScored = 0, lawCorrect = 0; // contracts with a gold governing law
    int lawAbsent = 0, lawAbsentCorrect = 0; // contracts without one: we named none
    int agreementScored = 0, agreementCorrect = 0;
    int effectiveScored = 0, effectiveCorrect = 0;
    double millisecondsPerContract = 0.0; // classify + extract, features included
    // How honest the confidences are, over the classifier's findings that carry one (right:
    // the span matches a gold span of its category): the mean squared error (Brier) and the
    // expected calibration error over ten equal-width bins (|mean confidence - share right|,
    // weighted by the bin's findings). Findings without a confidence are only counted.
    int calibratedFindings = 0, uncalibratedFindings = 0;
    double brier = 0.0, expectedCalibrationError = 0.0;
    double meanConfidence = 0.0, shareRight = 0.0;
    std::vector<double> binConfidence = std::vector<double>(10), binRight = std::vector<double>(10);
    std::vector<int> binCount = std::vector<int>(10);

    QString table() const;
    QJsonObject toJson() const;
};

// Turns the fast heads' findings of one held-out contract into the findings that are scored:
// `eval-heads --heads llm|all` asks the language model there, so its candidates come from
// fast heads that never saw the contract. An error stops the evaluation.
using FindingsRefiner = std::function<Result<QList<Finding>>(
    const LabelledContract& contract, const QList<Finding>& fastFindings)>;

// k-fold cross-validation of the fast heads: for each fold, train on the other folds
// (thresholds from inner folds of those only), then run the heads on the held-out
// contracts exactly as a review does and score them against the lawyers' labels. With a
// refiner, only the first `limit` contracts (0: all) are scored, each through the refiner.
Result<EvaluationResult> evaluateHeads(const QList<LabelledContract>& contracts, int folds,
    const TrainingOptions& options, const std::function<void(const QString&)>& log = {},
    const FindingsRefiner& refine = {}, int limit = 0);

// The fast heads of an already trained `model` (the shipped one, say) scored on every contract
// (the first `limit`, 0: all) without any training: the figure for contracts the model and
// its rules never saw. `folds` of the result is 0.
Result<EvaluationResult> evaluateTrainedModel(const QList<LabelledContract>& contracts,
    const ClauseModel& model, int threads = 0, const std::function<void(const QString&)>& log = {},
    const FindingsRefiner& refine = {}, int limit = 0);

// The findings the fast heads report for one contract (classifier + document-level rules +
// fields). Shared by the plugin head and the evaluation so both measure the same thing.
QList<Finding> fastFindings(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::vector<std::vector<float>>& scores);

// The governing law the findings name: every jurisdiction of the governing finding, joined
// by "; " ("Massachusetts; Netherlands"), else the best-scored Governing Law finding's law.
QString governingLawOf(const QList<Finding>& findings);

} // namespace cw::heads
