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
    std::vector<uint64_t> labels; // bit k (cuadCategories() order): matches a gold span of k
    uint64_t present = 0; // bit k: lawyers marked category k present
    QList<qsizetype> nonSpace; // nonSpacePrefix(text)
    // goldMatches[k][g]: candidates matching gold span g of category k.
    std::vector<std::vector<std::vector<int>>> goldMatches;
    // cued[k]: candidates holding the presence cue of category k (presence_cues.h).
    std::vector<std::vector<int>> cued;
};

struct TrainingOptions {
    uint32_t hashBits = kDefaultHashBits;
    int epochs = 10;
    float learningRate = 0.5f;
    int thresholdFolds = 4; // inner folds: their models are averaged, thresholds fitted on them
    size_t keepWeights = 20000; // strongest weights kept per category
    uint32_t seed = 17;
    int threads = 0; // worker threads for independent fits; 0: one per core
    bool presenceCues = true; // let cue wordings lower the presence threshold
};

PreparedContract prepareContract(const LabelledContract& contract, uint32_t hashBits);
// prepareContract over all contracts, on `threads` workers (0: one per core).
std::vector<PreparedContract> prepareContracts(
    const QList<LabelledContract>& contracts, uint32_t hashBits, int threads = 0);

// The categories the classifier learns: CUAD's, less those the document-level rules decide
// alone (the dates are learnt too, their rules' dates read as evidence).
const QStringList& classifierCategories();

// Fits the per-category logistic regressions on `train` (indices into `contracts`), all
// categories in one pass over the data. Thresholds are left at their defaults. Tried and left
// out (5-fold on 298, seeds 17-20 at macro-F1 0.763/0.768/0.765/0.768, span F1 0.625/0.627/
// 0.623/0.627): features scaled by their inverse document frequency over the training
// candidates, folded into the weights so that scoring stays as it is (0.769/0.769/0.766/0.763,
// span 0.629/0.626/0.627/0.629: within the seeds' scatter); and in the cross-validation, each
// fold's model fitted on all of its training contracts rather than averaged from the pair
// models whose held-out scores set its thresholds (seeds 17/18: 0.761/0.762; span precision
// 0.66 -> 0.63, the thresholds sit too low for a model that saw more). And NBSVM-style scaling,
// each feature of each category multiplied by its smoothed log-ratio |log((positives holding
// it + 1) / (expected under independence + 1))| (fitted on the training contracts, normalised to
// mean 1 over their candidates, folded into the weights so that scoring stays as it is): seed 17
// macro-F1 0.750, span F1 0.632 (0.5 + the ratio: 0.755 / 0.634); the average of that model and
// the plain one lifts span F1 but costs presence (seed 17: 0.751 / 0.637, seed 18: 0.762 / 0.638,
// against 0.763 / 0.625 and 0.768 / 0.627; Price Restrictions 0.32 -> 0.19 at seed 17). A span
// stage could use the ensemble while presence keeps the plain model, at twice the scoring.
// Against seeds 17/18 at 0.763/0.768 (span 0.625/0.627): the positives' weight capped at 100
// rather than 30, so that rare categories weigh their few positives by the full sqrt of the
// imbalance (0.764/0.758, span 0.625/0.626; Price Restrictions 0.30/0.22), or at 15 (0.763/
// 0.764); candidates that overlap a gold span without matching it left out of that category's
// loss rather than taught as negatives (0.762/0.768, span 0.626/0.627); and bagging, each fit
// the average of two fits with different example orders (0.767/0.759, span 0.627/0.625: Third
// Party Beneficiary 0.48 at seed 17 but 0.44 at 18; twice the training time). Against seeds
// 17/18 at 0.783/0.786 (span F1 0.627/0.628), issue 34 section 3: 20 epochs (0.785/0.780, span
// 0.629/0.629); a learning rate of 0.25 (0.778/0.781) or 1.0 (0.777/0.776); 40,000 weights kept
// (0.783/0.785); 100 kept per positive candidate, 2,000 to 20,000 (0.780/0.782); examples
// weighted by sqrt(mean candidates / the contract's), so long contracts count less (0.781/
// 0.776); a category's negatives in contracts that have it at half weight, as lawyers leave
// some like sentences unmarked (seeds 17-20 0.786/0.787/0.788/0.785, mean 0.7864 against 0.7859,
// span F1 -0.003, CRE 0.44-0.49), at a quarter (0.781/0.777); and in the cross-validation, each
// fold trained as trainClauseModel trains with 8 inner folds rather than from the shared pair
// models (seed 17: 0.778). Averaging the presence evidence of the four seeds' models gives
// 0.786, no more than one seed's: the order's variance is not what limits. Also against
// 0.783/0.786 (issue 34): the weights averaged over the last five epochs only rather than all
// ten (0.785/0.785, span 0.628/0.628); and per-category feature selection, a category's weight
// on a feature held at zero where the feature occurs in that category's positives in only one
// training contract, so that a rare category learns the wording its contracts share rather
// than one contract's names (0.784/0.775, span 0.624/0.623); and each positive candidate's
// weight scaled by sqrt(the category's mean positives per contract / its contract's), kept to
// the same total, so that a contract whose clause runs over many candidates does not make the
// category in its own image (0.781/0.780, span 0.626/0.628). Against seeds 17/18 at 0.786/0.790
// (the dates learnt, document_findings.h): hard negatives, as in multiple-instance learning's
// max-pooled loss, since a contract's best candidates decide its presence: from the third epoch
// on, every other epoch, the two best-scored candidates of each training contract lacking a
// category weighted 3 for it (0.787/0.785: precision up in most categories, Competitive
// Restriction Exception 0.52/0.46 -> 0.42/0.47).
ClauseModel fitClauseModel(const std::vector<PreparedContract>& contracts,
    const std::vector<int>& train, const TrainingOptions& options);

// The model whose logit is the mean of the models' logits: every weight and bias averaged
// (the models share hash size and categories), each category pruned again to its
// `keepWeights` strongest weights. Thresholds fitted on the held-out scores of the inner-fold
// models suit their average, which has seen all the data; a model fitted anew on all of it
// scores higher than they do on text it never saw, and its thresholds would sit too low.
ClauseModel averageModels(const std::vector<ClauseModel>& models, size_t keepWeights);

// Per-candidate probabilities [candidate][category] for one prepared contract, with the
// category gates applied.
std::vector<std::vector<float>> scoreContract(
    const ClauseModel& model, const PreparedContract& contract);

// Trains one model per inner fold of `train`, picks thresholds on their held-out scores, and
// returns their average (averageModels) with those thresholds. `log` gets one line per stage.
ClauseModel trainClauseModel(const std::vector<PreparedContract>& contracts,
    const std::vector<int>& train, const TrainingOptions& options,
    const std::function<void(const QString&)>& log = {});

// Runs `work(i)` for i in [0, count) on `threads` workers (0: one per core).
void runParallel(int count, int threads, const std::function<void(int)>& work);

} // namespace cw::heads
