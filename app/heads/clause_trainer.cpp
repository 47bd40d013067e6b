#include "app/heads/clause_trainer.h"

#include "app/heads/clause_thresholds.h"
#include "app/heads/cuad_classifier.h"
#include "app/heads/document_findings.h"
#include "app/heads/presence_cues.h"

#include <QThread>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

namespace cw::heads {

void runParallel(int count, int threads, const std::function<void(int)>& work)
{
    if (threads <= 0)
        threads = std::max(1, QThread::idealThreadCount());
    threads = std::min(threads, count);
    if (threads <= 1) {
        for (int i = 0; i < count; ++i)
            work(i);
        return;
    }
    std::atomic<int> next { 0 };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = next++; i < count; i = next++)
                work(i);
        });
    }
    for (std::thread& t : pool)
        t.join();
}

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
    p.cued.resize(size_t(categories.size()));
    for (int k = 0; k < categories.size(); ++k) {
        p.cued[size_t(k)] = cueCandidates(categories[k], contract.text, p.candidates);
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

std::vector<PreparedContract> prepareContracts(
    const QList<LabelledContract>& contracts, uint32_t hashBits, int threads)
{
    std::vector<PreparedContract> prepared(size_t(contracts.size()));
    runParallel(int(contracts.size()), threads,
        [&](int i) { prepared[size_t(i)] = prepareContract(contracts[i], hashBits); });
    return prepared;
}

const QStringList& classifierCategories()
{
    static const QStringList names = [] {
        QStringList out;
        for (const QString& c : cuadCategories()) {
            if (!ruleDecidedCategories().contains(c))
                out.append(c);
        }
        return out;
    }();
    return names;
}

namespace {

// Weights of all categories for one feature sit side by side (a row of kStride floats,
// then the row of their running sums for averaging), so one example costs one pass over
// its features whatever the number of categories.
constexpr int kStride = 40;

struct Example {
    const FeatureVector* x;
    uint64_t labels;
};

} // namespace

ClauseModel fitClauseModel(const std::vector<PreparedContract>& contracts,
    const std::vector<int>& train, const TrainingOptions& o)
{
    const QStringList& names = classifierCategories();
    const int categories = int(names.size());
    assert(categories <= kStride);
    std::vector<int> bit(static_cast<size_t>(categories));
    for (int k = 0; k < categories; ++k)
        bit[size_t(k)] = int(cuadCategories().indexOf(names[k]));

    std::vector<Example> examples;
    for (int c : train) {
        const PreparedContract& p = contracts[size_t(c)];
        for (size_t i = 0; i < p.features.size(); ++i) {
            uint64_t y = 0;
            for (int k = 0; k < categories; ++k)
                y |= ((p.labels[i] >> bit[size_t(k)]) & 1u) << k;
            examples.push_back({ &p.features[i], y });
        }
    }
    // Positives weigh more, as each category has few: sqrt of the imbalance, bounded.
    std::vector<float> positiveWeight(kStride, 1.0f);
    std::vector<size_t> positives(kStride, 0);
    for (const Example& e : examples) {
        for (int k = 0; k < categories; ++k)
            positives[size_t(k)] += (e.labels >> k) & 1u;
    }
    for (int k = 0; k < categories; ++k) {
        const double pos = double(positives[size_t(k)]);
        positiveWeight[size_t(k)] = pos > 0
            ? float(std::clamp(std::sqrt((double(examples.size()) - pos) / pos), 1.0, 30.0))
            : 1.0f;
    }

    const size_t dim = size_t(1) << o.hashBits;
    // Row f: [w(kStride) | u(kStride)]; averaged weight = w - u / steps.
    std::vector<float> rows(dim * 2 * kStride, 0.0f);
    std::vector<double> bias(kStride, 0.0), biasSum(kStride, 0.0);
    std::vector<size_t> order(examples.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng(o.seed);
    double step = 1.0;
    alignas(32) float z[kStride];
    alignas(32) float delta[kStride];
    alignas(32) float deltaSum[kStride];
    for (int epoch = 0; epoch < o.epochs; ++epoch) {
        std::shuffle(order.begin(), order.end(), rng);
        const double lr = o.learningRate / (1.0 + 0.5 * epoch);
        for (size_t idx : order) {
            const Example& e = examples[idx];
            std::fill(std::begin(z), std::end(z), 0.0f);
            for (uint32_t f : e.x->indices) {
                const float* w = &rows[size_t(f) * 2 * kStride];
                for (int k = 0; k < kStride; ++k)
                    z[k] += w[k];
            }
            bool any = false;
            for (int k = 0; k < kStride; ++k) {
                if (k >= categories) {
                    delta[k] = deltaSum[k] = 0.0f;
                    continue;
                }
                const bool y = (e.labels >> k) & 1u;
                const double s = bias[size_t(k)] + double(z[k]) * e.x->value;
                const double p = 1.0 / (1.0 + std::exp(-s));
                double g = (p - (y ? 1.0 : 0.0)) * (y ? positiveWeight[size_t(k)] : 1.0);
                if (std::abs(g) < 1e-4)
                    g = 0.0;
                any = any || g != 0.0;
                delta[k] = float(-lr * g * e.x->value);
                deltaSum[k] = float(step) * delta[k];
                bias[size_t(k)] += -lr * g;
                biasSum[size_t(k)] += step * (-lr * g);
            }
            if (any) {
                for (uint32_t f : e.x->indices) {
                    float* w = &rows[size_t(f) * 2 * kStride];
                    float* u = w + kStride;
                    for (int k = 0; k < kStride; ++k) {
                        w[k] += delta[k];
                        u[k] += deltaSum[k];
                    }
                }
            }
            step += 1.0;
        }
    }

    QList<CategoryModel> models;
    std::vector<std::pair<float, uint32_t>> strongest;
    for (int k = 0; k < categories; ++k) {
        CategoryModel model;
        model.category = names[k];
        if (positives[size_t(k)] == 0) {
            model.bias = -20.0f;
            models.append(std::move(model));
            continue;
        }
        strongest.clear();
        for (size_t f = 0; f < dim; ++f) {
            const float* w = &rows[f * 2 * kStride];
            const float avg = w[k] - w[kStride + k] / float(step);
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
        model.bias = float(bias[size_t(k)] - biasSum[size_t(k)] / step);
        models.append(std::move(model));
    }
    return ClauseModel(o.hashBits, std::move(models));
}

ClauseModel averageModels(const std::vector<ClauseModel>& models, size_t keepWeights)
{
    assert(!models.empty());
    const uint32_t hashBits = models.front().hashBits();
    const float share = 1.0f / float(models.size());
    QList<CategoryModel> out = models.front().categories();
    std::vector<float> dense(size_t(1) << hashBits, 0.0f);
    std::vector<uint32_t> touched;
    std::vector<std::pair<float, uint32_t>> strongest;
    for (int k = 0; k < out.size(); ++k) {
        CategoryModel& c = out[k];
        c.bias = 0.0f;
        touched.clear();
        for (const ClauseModel& m : models) {
            assert(m.hashBits() == hashBits && m.categories().size() == out.size());
            const CategoryModel& mk = m.categories()[k];
            c.bias += share * mk.bias;
            for (size_t j = 0; j < mk.indices.size(); ++j) {
                if (dense[mk.indices[j]] == 0.0f)
                    touched.push_back(mk.indices[j]);
                dense[mk.indices[j]] += share * mk.weights[j];
            }
        }
        strongest.clear();
        for (uint32_t f : touched) {
            if (dense[f] != 0.0f)
                strongest.push_back({ dense[f], f });
            dense[f] = 0.0f;
        }
        if (strongest.size() > keepWeights) {
            std::nth_element(strongest.begin(), strongest.begin() + long(keepWeights),
                strongest.end(),
                [](const auto& a, const auto& b) { return std::abs(a.first) > std::abs(b.first); });
            strongest.resize(keepWeights);
        }
        std::sort(strongest.begin(), strongest.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
        c.indices.clear();
        c.weights.clear();
        for (const auto& [weight, f] : strongest) {
            c.indices.push_back(f);
            c.weights.push_back(weight);
        }
    }
    return ClauseModel(hashBits, std::move(out));
}

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
    // One model per inner fold, each scoring the training contracts it did not see.
    const int folds = std::max(2, options.thresholdFolds);
    std::vector<std::vector<HeldOutScores>> heldByFold(static_cast<size_t>(folds));
    std::vector<ClauseModel> innerModels(static_cast<size_t>(folds));
    runParallel(folds, options.threads, [&](int f) {
        std::vector<int> inner, outer;
        for (size_t i = 0; i < train.size(); ++i)
            (int(i) % folds == f ? outer : inner).push_back(train[i]);
        innerModels[size_t(f)] = fitClauseModel(contracts, inner, options);
        for (int c : outer)
            heldByFold[size_t(f)].push_back(
                { c, scoreContract(innerModels[size_t(f)], contracts[size_t(c)]) });
    });
    const ClauseModel final = averageModels(innerModels, options.keepWeights);
    std::vector<HeldOutScores> held;
    for (auto& fold : heldByFold)
        std::move(fold.begin(), fold.end(), std::back_inserter(held));
    if (log)
        log(QStringLiteral("%1 inner-fold models trained and averaged (%2 contracts)")
                .arg(folds)
                .arg(train.size()));
    return withThresholds(final, contracts, held, options.presenceCues);
}

} // namespace cw::heads
