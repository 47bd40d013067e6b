#include "app/heads/clause_trainer.h"

#include "app/heads/cuad_classifier.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace cw::heads {

PreparedContract prepareContract(const LabelledContract& contract, uint32_t hashBits)
{
    PreparedContract p;
    p.source = &contract;
    p.candidates = buildCandidates(contract.text, {});
    p.nonSpace = nonSpacePrefix(contract.text);
    p.features.reserve(size_t(p.candidates.size()));
    for (int i = 0; i < p.candidates.size(); ++i)
        p.features.push_back(candidateFeatures(contract.text, p.candidates, i, hashBits));
    p.labels.assign(size_t(p.candidates.size()), 0);
    const QStringList& categories = cuadCategories();
    p.goldMatches.resize(size_t(categories.size()));
    for (int k = 0; k < categories.size(); ++k) {
        if (contract.present.contains(categories[k]))
            p.present |= uint64_t(1) << k;
        const auto spans = contract.spans.value(categories[k]);
        for (const auto& [gs, ge] : spans) {
            std::vector<int> matches;
            for (int i = 0; i < p.candidates.size(); ++i) {
                const ClauseCandidate& c = p.candidates[i];
                if (c.end <= gs || c.start >= ge)
                    continue;
                if (spansMatch(p.nonSpace, c.start, c.end, gs, ge)) {
                    matches.push_back(i);
                    p.labels[size_t(i)] |= uint64_t(1) << k;
                }
            }
            p.goldMatches[size_t(k)].push_back(std::move(matches));
        }
    }
    return p;
}

namespace {

constexpr float kMinPresenceThreshold = 0.25f;

struct Example {
    const FeatureVector* x;
    uint64_t labels;
};

// Averaged SGD for one logistic regression over sparse binary features.
CategoryModel fitCategory(const std::vector<Example>& examples, int k, const TrainingOptions& o,
    std::vector<float>& w, std::vector<float>& u)
{
    const size_t dim = size_t(1) << o.hashBits;
    w.assign(dim, 0.0f);
    u.assign(dim, 0.0f);
    double b = 0.0, ub = 0.0;
    size_t positives = 0;
    for (const Example& e : examples)
        positives += (e.labels >> k) & 1u;
    CategoryModel model;
    if (positives == 0) {
        model.bias = -20.0f;
        return model;
    }
    const double negatives = double(examples.size() - positives);
    const double positiveWeight = std::clamp(std::sqrt(negatives / double(positives)), 1.0, 30.0);
    std::vector<size_t> order(examples.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng(o.seed + uint32_t(k));
    double step = 1.0;
    for (int epoch = 0; epoch < o.epochs; ++epoch) {
        std::shuffle(order.begin(), order.end(), rng);
        const double lr = o.learningRate / (1.0 + 0.5 * epoch);
        for (size_t idx : order) {
            const Example& e = examples[idx];
            const bool y = (e.labels >> k) & 1u;
            double z = b;
            for (uint32_t f : e.x->indices)
                z += w[f] * e.x->value;
            const double p = 1.0 / (1.0 + std::exp(-z));
            const double g = (p - (y ? 1.0 : 0.0)) * (y ? positiveWeight : 1.0);
            if (std::abs(g) > 1e-4) {
                const float delta = float(-lr * g * e.x->value);
                for (uint32_t f : e.x->indices) {
                    w[f] += delta;
                    u[f] += float(step) * delta;
                }
                b += -lr * g;
                ub += step * (-lr * g);
            }
            step += 1.0;
        }
    }
    // Averaged weights, then keep the strongest.
    std::vector<std::pair<float, uint32_t>> strongest;
    for (size_t f = 0; f < dim; ++f) {
        const float avg = w[f] - u[f] / float(step);
        if (avg != 0.0f)
            strongest.push_back({ avg, uint32_t(f) });
    }
    if (strongest.size() > o.keepWeights) {
        std::nth_element(strongest.begin(), strongest.begin() + long(o.keepWeights),
            strongest.end(),
            [](const auto& a, const auto& c) { return std::abs(a.first) > std::abs(c.first); });
        strongest.resize(o.keepWeights);
    }
    std::sort(strongest.begin(), strongest.end(),
        [](const auto& a, const auto& c) { return a.second < c.second; });
    for (const auto& [weight, f] : strongest) {
        model.indices.push_back(f);
        model.weights.push_back(weight);
    }
    model.bias = float(b - ub / step);
    return model;
}

ClauseModel fitAll(const std::vector<PreparedContract>& contracts, const std::vector<int>& train,
    const TrainingOptions& o)
{
    std::vector<Example> examples;
    for (int c : train) {
        const PreparedContract& p = contracts[size_t(c)];
        for (size_t i = 0; i < p.features.size(); ++i)
            examples.push_back({ &p.features[i], p.labels[i] });
    }
    QList<CategoryModel> models;
    std::vector<float> w, u;
    const QStringList& categories = cuadCategories();
    for (int k = 0; k < categories.size(); ++k) {
        CategoryModel m = fitCategory(examples, k, o, w, u);
        m.category = categories[k];
        models.append(std::move(m));
    }
    return ClauseModel(o.hashBits, std::move(models));
}

struct HeldOut {
    int contract;
    std::vector<std::vector<float>> scores;
};

float bestPresenceThreshold(const std::vector<std::pair<float, bool>>& maxima)
{
    int positives = 0;
    for (const auto& m : maxima)
        positives += m.second;
    if (positives == 0)
        return 1.01f;
    std::vector<std::pair<float, bool>> sorted = maxima;
    std::sort(sorted.begin(), sorted.end(),
        [](const auto& a, const auto& b) { return a.first > b.first; });
    int tp = 0;
    double bestF1 = -1.0;
    float best = 0.5f;
    for (size_t i = 0; i < sorted.size(); ++i) {
        tp += sorted[i].second;
        const double f1 = 2.0 * tp / double(int(i + 1) + positives);
        const float next = i + 1 < sorted.size() ? sorted[i + 1].first : 0.0f;
        if (sorted[i].first == next)
            continue;
        if (f1 > bestF1) {
            bestF1 = f1;
            best = 0.5f * (sorted[i].first + next);
        }
    }
    // A floor keeps categories learned from a handful of contracts from firing on faint
    // evidence (thresholds near zero fit the inner folds' two positives and nothing else).
    return tp > 0 && bestF1 > 0.0 ? std::max(best, kMinPresenceThreshold) : 1.01f;
}

float bestSpanThreshold(const std::vector<PreparedContract>& contracts,
    const std::vector<HeldOut>& held, int k, float presence)
{
    double bestF1 = -1.0;
    float best = presence;
    for (float s = 0.05f; s < 0.99f; s += 0.025f) {
        long predicted = 0, correct = 0, gold = 0, found = 0;
        for (const HeldOut& h : held) {
            const PreparedContract& p = contracts[size_t(h.contract)];
            const auto& golds = p.goldMatches[size_t(k)];
            gold += long(golds.size());
            int top = -1;
            float topScore = -1.0f;
            for (size_t i = 0; i < h.scores.size(); ++i) {
                if (h.scores[i][size_t(k)] > topScore) {
                    topScore = h.scores[i][size_t(k)];
                    top = int(i);
                }
            }
            if (topScore < presence)
                continue;
            std::vector<char> chosen(h.scores.size(), 0);
            for (size_t i = 0; i < h.scores.size(); ++i)
                chosen[i] = h.scores[i][size_t(k)] >= s || int(i) == top;
            for (size_t i = 0; i < chosen.size(); ++i) {
                if (!chosen[i])
                    continue;
                ++predicted;
                correct += (p.labels[i] >> k) & 1u;
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

} // namespace

std::vector<std::vector<float>> scoreContract(
    const ClauseModel& model, const PreparedContract& contract)
{
    std::vector<std::vector<float>> scores(contract.features.size());
    for (size_t i = 0; i < contract.features.size(); ++i)
        model.score(contract.features[i], scores[i]);
    applyCategoryGates(model, contract.source->text, contract.candidates, scores);
    return scores;
}

ClauseModel trainClauseModel(const std::vector<PreparedContract>& contracts,
    const std::vector<int>& train, const TrainingOptions& options,
    const std::function<void(const QString&)>& log)
{
    // Held-out scores for every training contract from inner folds.
    std::vector<HeldOut> held;
    const int folds = std::max(2, options.thresholdFolds);
    for (int f = 0; f < folds; ++f) {
        std::vector<int> inner, outer;
        for (size_t i = 0; i < train.size(); ++i)
            (int(i) % folds == f ? outer : inner).push_back(train[i]);
        const ClauseModel model = fitAll(contracts, inner, options);
        for (int c : outer)
            held.push_back({ c, scoreContract(model, contracts[size_t(c)]) });
        if (log)
            log(QStringLiteral("threshold fold %1/%2 done").arg(f + 1).arg(folds));
    }
    ClauseModel final = fitAll(contracts, train, options);
    QList<CategoryModel> categories = final.categories();
    for (int k = 0; k < categories.size(); ++k) {
        std::vector<std::pair<float, bool>> maxima;
        for (const HeldOut& h : held) {
            float m = 0.0f;
            for (const auto& s : h.scores)
                m = std::max(m, s[size_t(k)]);
            maxima.push_back({ m, bool((contracts[size_t(h.contract)].present >> k) & 1u) });
        }
        categories[k].presenceThreshold = bestPresenceThreshold(maxima);
        categories[k].spanThreshold
            = bestSpanThreshold(contracts, held, k, categories[k].presenceThreshold);
    }
    if (log)
        log(QStringLiteral("final model trained on %1 contracts").arg(train.size()));
    return ClauseModel(options.hashBits, std::move(categories));
}

} // namespace cw::heads
