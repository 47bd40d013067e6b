#include "app/heads/clause_thresholds.h"

#include "app/heads/cuad_classifier.h"
#include "app/heads/document_findings.h"

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

// Span counts of one category on the held-out contracts, for each span threshold of the grid.
struct SpanCounts {
    long predicted = 0, correct = 0, gold = 0, found = 0;
};
constexpr float kSpanLow = 0.05f, kSpanStep = 0.025f;
constexpr int kSpanSteps = 38; // 0.05 .. 0.975

float spanThresholdAt(int step)
{
    return kSpanLow + kSpanStep * float(step);
}

std::vector<SpanCounts> spanCounts(const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOutScores>& held, const CategoryModel& c, int k, int bit)
{
    std::vector<SpanCounts> out(kSpanSteps);
    for (const HeldOutScores& h : held) {
        const PreparedContract& p = contracts[size_t(h.contract)];
        const auto& golds = p.goldMatches[size_t(bit)];
        const PresenceDecision d = decidePresence(c, h.scores, k, p.cued[size_t(bit)]);
        for (int step = 0; step < kSpanSteps; ++step) {
            SpanCounts& n = out[size_t(step)];
            n.gold += long(golds.size());
            if (!d.present)
                continue;
            const float s = spanThresholdAt(step);
            std::vector<char> chosen(h.scores.size(), 0);
            for (size_t i = 0; i < h.scores.size(); ++i)
                chosen[i] = int(i) == d.top || (!d.byCue && h.scores[i][size_t(k)] >= s);
            for (size_t i = 0; i < chosen.size(); ++i) {
                if (!chosen[i])
                    continue;
                ++n.predicted;
                n.correct += (p.labels[i] >> bit) & 1u;
            }
            for (const auto& matches : golds) {
                for (int m : matches) {
                    if (chosen[size_t(m)]) {
                        ++n.found;
                        break;
                    }
                }
            }
        }
    }
    return out;
}

// What the document-level rules' findings add to the span counts on the held-out contracts.
SpanCounts ruleSpanCounts(const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOutScores>& held, const ClauseModel& model)
{
    SpanCounts n;
    for (const HeldOutScores& h : held) {
        const PreparedContract& p = contracts[size_t(h.contract)];
        if (!p.source)
            continue; // scores without a contract behind them (tests)
        const QList<Finding> findings = documentLevelFindings(p.source->text);
        for (const QString& category : documentLevelCategories()) {
            if (model.categoryIndex(category) >= 0)
                continue; // the model's own span counts have it
            const auto spans = p.source->spans.value(category);
            n.gold += spans.size();
            QList<const Finding*> mine;
            for (const Finding& f : findings) {
                if (f.category == category)
                    mine.append(&f);
            }
            for (const Finding* f : mine) {
                ++n.predicted;
                for (const auto& [gs, ge] : spans) {
                    if (spansMatch(p.nonSpace, f->start, f->end, gs, ge)) {
                        ++n.correct;
                        break;
                    }
                }
            }
            for (const auto& [gs, ge] : spans) {
                for (const Finding* f : mine) {
                    if (spansMatch(p.nonSpace, f->start, f->end, gs, ge)) {
                        ++n.found;
                        break;
                    }
                }
            }
        }
    }
    return n;
}

double spanF1(const SpanCounts& n)
{
    if (n.predicted == 0 || n.gold == 0)
        return 0.0;
    const double precision = double(n.correct) / double(n.predicted);
    const double recall = double(n.found) / double(n.gold);
    return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

// Each category's span threshold for the span F1 of all categories together (what the
// evaluation reports), not for its own: a category whose findings are seldom right should
// report few beyond its best, one whose findings are usually right may report more. Starts
// from each category's own best and improves one category at a time, twice over; on a tie
// the higher threshold. `rules`: the counts of the document-level rules' findings (parties,
// dates, title), which the evaluation counts too.
std::vector<int> chooseSpanSteps(
    const std::vector<std::vector<SpanCounts>>& counts, const SpanCounts& rules)
{
    std::vector<int> steps(counts.size(), 0);
    for (size_t k = 0; k < counts.size(); ++k) {
        // Highest first, so that a tie (a category that found nothing) keeps the highest.
        double best = -1.0;
        for (int step = kSpanSteps - 1; step >= 0; --step) {
            if (const double f = spanF1(counts[k][size_t(step)]); f > best) {
                best = f;
                steps[k] = step;
            }
        }
    }
    SpanCounts total = rules;
    auto add = [&](const SpanCounts& n, long sign) {
        total.predicted += sign * n.predicted, total.correct += sign * n.correct;
        total.gold += sign * n.gold, total.found += sign * n.found;
    };
    for (size_t k = 0; k < counts.size(); ++k)
        add(counts[k][size_t(steps[k])], 1);
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t k = 0; k < counts.size(); ++k) {
            add(counts[k][size_t(steps[k])], -1);
            double best = -1.0;
            for (int step = kSpanSteps - 1; step >= 0; --step) {
                SpanCounts with = total;
                const SpanCounts& n = counts[k][size_t(step)];
                with.predicted += n.predicted, with.correct += n.correct;
                with.gold += n.gold, with.found += n.found;
                if (const double f = spanF1(with); f > best + 1e-12) {
                    best = f;
                    steps[k] = step;
                }
            }
            add(counts[k][size_t(steps[k])], 1);
        }
    }
    return steps;
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
    std::vector<std::vector<SpanCounts>> counts(size_t(categories.size()));
    for (int k = 0; k < categories.size(); ++k) {
        const int bit = int(cuadCategories().indexOf(categories[k].category));
        assert(bit >= 0);
        std::vector<ContractEvidence> evidence;
        std::vector<PresenceSample> samples;
        for (const HeldOutScores& h : held) {
            const PreparedContract& p = contracts[size_t(h.contract)];
            samples.push_back(
                { presenceFeatures(h.scores, k, p.cued[size_t(bit)], categories[k].qualified),
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
        counts[size_t(k)] = spanCounts(contracts, held, categories[k], k, bit);
    }
    const std::vector<int> steps = chooseSpanSteps(counts, ruleSpanCounts(contracts, held, model));
    for (int k = 0; k < categories.size(); ++k) {
        const int bit = int(cuadCategories().indexOf(categories[k].category));
        categories[k].spanThreshold = spanThresholdAt(steps[size_t(k)]);
        categories[k].calibration = fitCalibration(contracts, held, categories[k], k, bit);
    }
    return ClauseModel(model.hashBits(), std::move(categories));
}

} // namespace cw::heads
