#include "app/heads/clause_thresholds.h"

#include "app/heads/cuad_classifier.h"

#include <algorithm>

namespace cw::heads {

namespace {

// Below this many held-out positive contracts the F1-best threshold is a guess fitted to a
// handful of cases; such a category keeps a threshold no lower than kRareFloor.
constexpr int kFewPositives = 8;
constexpr float kRareFloor = 0.15f;
constexpr float kFloor = 0.05f;
// The cue route must earn its place: it is kept only when it lifts held-out F1 by this much.
constexpr double kCueGain = 0.01;
constexpr float kNever = 2.0f;

struct ContractEvidence {
    float best = 0.0f; // best candidate's score
    float bestCued = -1.0f; // best score among candidates holding the cue; -1: no cue
    bool present = false;
};

// Thresholds between consecutive distinct values, highest first, then "never".
std::vector<float> cutPoints(std::vector<float> values, float lowest)
{
    std::sort(values.begin(), values.end(), std::greater<>());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::vector<float> cuts;
    for (size_t i = 0; i < values.size(); ++i) {
        const float next = i + 1 < values.size() ? values[i + 1] : 0.0f;
        const float cut = 0.5f * (values[i] + next);
        if (cut >= lowest)
            cuts.push_back(cut);
    }
    cuts.push_back(kNever);
    return cuts;
}

double presenceF1(const std::vector<ContractEvidence>& evidence, float high, float cue)
{
    int tp = 0, fp = 0, fn = 0;
    for (const ContractEvidence& e : evidence) {
        const bool predicted = e.best >= high || (e.bestCued >= 0.0f && e.bestCued >= cue);
        tp += predicted && e.present;
        fp += predicted && !e.present;
        fn += !predicted && e.present;
    }
    return tp ? 2.0 * tp / double(2 * tp + fp + fn) : 0.0;
}

// Sets presenceThreshold and cueThreshold of `c` for contract-level F1; returns that F1.
double choosePresence(CategoryModel& c, const std::vector<ContractEvidence>& evidence)
{
    int positives = 0;
    std::vector<float> best, cued;
    for (const ContractEvidence& e : evidence) {
        positives += e.present;
        best.push_back(e.best);
        if (e.bestCued >= 0.0f)
            cued.push_back(e.bestCued);
    }
    c.presenceThreshold = kNever;
    c.cueThreshold = kNever;
    if (positives == 0)
        return 0.0;
    const float floor = positives < kFewPositives ? kRareFloor : kFloor;
    const std::vector<float> highs = cutPoints(best, floor);
    double bestPlain = 0.0;
    for (float high : highs) {
        const double f1 = presenceF1(evidence, high, kNever);
        if (f1 > bestPlain) {
            bestPlain = f1;
            c.presenceThreshold = high;
        }
    }
    if (cued.empty())
        return bestPlain;
    const std::vector<float> lows = cutPoints(cued, 0.0f);
    double bestWithCue = bestPlain;
    float bestHigh = c.presenceThreshold, bestLow = kNever;
    for (float high : highs) {
        for (float low : lows) {
            if (low >= high)
                continue;
            const double f1 = presenceF1(evidence, high, low);
            if (f1 > bestWithCue) {
                bestWithCue = f1;
                bestHigh = high;
                bestLow = low;
            }
        }
    }
    if (bestWithCue >= bestPlain + kCueGain) {
        c.presenceThreshold = bestHigh;
        c.cueThreshold = bestLow;
        return bestWithCue;
    }
    return bestPlain;
}

// Fits the category's presence model on the held-out contracts and chooses its threshold for
// contract-level F1 on them; `c` keeps its rule when no model can be fitted.
void choosePresenceModel(CategoryModel& c, const std::vector<PresenceSample>& samples)
{
    const std::optional<PresenceModel> model = fitPresenceModel(samples);
    if (!model)
        return;
    std::vector<ContractEvidence> evidence;
    for (const PresenceSample& s : samples)
        evidence.push_back({ float(model->probability(s.x)), -1.0f, s.present });
    CategoryModel trial = c;
    choosePresence(trial, evidence);
    c.presence = model;
    c.presenceThreshold = trial.presenceThreshold;
    c.cueThreshold = kNever;
}

float bestSpanThreshold(const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOutScores>& held, const CategoryModel& c, int k, int bit)
{
    double bestF1 = -1.0;
    float best = c.presenceThreshold;
    for (float s = 0.05f; s < 0.99f; s += 0.025f) {
        long predicted = 0, correct = 0, gold = 0, found = 0;
        for (const HeldOutScores& h : held) {
            const PreparedContract& p = contracts[size_t(h.contract)];
            const auto& golds = p.goldMatches[size_t(bit)];
            gold += long(golds.size());
            const PresenceDecision d = decidePresence(c, h.scores, k, p.cued[size_t(bit)]);
            if (!d.present)
                continue;
            std::vector<char> chosen(h.scores.size(), 0);
            for (size_t i = 0; i < h.scores.size(); ++i)
                chosen[i] = int(i) == d.top || (!d.byCue && h.scores[i][size_t(k)] >= s);
            for (size_t i = 0; i < chosen.size(); ++i) {
                if (!chosen[i])
                    continue;
                ++predicted;
                correct += (p.labels[i] >> bit) & 1u;
            }
            for (const auto& matches : golds) {
                for (int m : matches) {
                    if (chosen[size_t(m)]) {
                        ++found;
                        break;
                    }
                }
            }
        }
        if (predicted == 0 || gold == 0)
            continue;
        const double precision = double(correct) / double(predicted);
        const double recall = double(found) / double(gold);
        const double f1
            = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
        if (f1 > bestF1) {
            bestF1 = f1;
            best = s;
        }
    }
    return best;
}

// The (score, correct) pairs of the findings category `k` would report on the held-out
// contracts with the thresholds of `c`, and Platt's fit to them.
std::optional<PlattCalibration> fitCalibration(const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOutScores>& held, const CategoryModel& c, int k, int bit)
{
    std::vector<CalibrationSample> samples;
    for (const HeldOutScores& h : held) {
        const PreparedContract& p = contracts[size_t(h.contract)];
        const PresenceDecision d = decidePresence(c, h.scores, k, p.cued[size_t(bit)]);
        if (!d.present)
            continue;
        for (size_t i = 0; i < h.scores.size(); ++i) {
            const float s = h.scores[i][size_t(k)];
            if (int(i) != d.top && (d.byCue || s < c.spanThreshold))
                continue;
            samples.push_back({ s, bool((p.labels[i] >> bit) & 1u) });
        }
    }
    return fitPlatt(samples);
}

} // namespace

ClauseModel withThresholds(const ClauseModel& model, const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOutScores>& held, bool presenceCues)
{
    QList<CategoryModel> categories = model.categories();
    for (int k = 0; k < categories.size(); ++k) {
        const int bit = int(cuadCategories().indexOf(categories[k].category));
        assert(bit >= 0);
        std::vector<ContractEvidence> evidence;
        std::vector<PresenceSample> samples;
        for (const HeldOutScores& h : held) {
            const PreparedContract& p = contracts[size_t(h.contract)];
            samples.push_back({ presenceFeatures(h.scores, k, p.cued[size_t(bit)]),
                bool((p.present >> bit) & 1u) });
            ContractEvidence e;
            for (const auto& s : h.scores)
                e.best = std::max(e.best, s[size_t(k)]);
            for (int i : presenceCues ? p.cued[size_t(bit)] : std::vector<int> {})
                e.bestCued = std::max(e.bestCued, h.scores[size_t(i)][size_t(k)]);
            e.present = (p.present >> bit) & 1u;
            evidence.push_back(e);
        }
        categories[k].presence.reset();
        choosePresence(categories[k], evidence);
        if (presenceCues)
            choosePresenceModel(categories[k], samples);
        categories[k].spanThreshold = bestSpanThreshold(contracts, held, categories[k], k, bit);
        categories[k].calibration = fitCalibration(contracts, held, categories[k], k, bit);
    }
    return ClauseModel(model.hashBits(), std::move(categories));
}

} // namespace cw::heads
