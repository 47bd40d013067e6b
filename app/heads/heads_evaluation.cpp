#include "app/heads/heads_evaluation.h"

#include "app/heads/clause_thresholds.h"
#include "app/heads/cuad_classifier.h"
#include "app/heads/document_findings.h"
#include "app/heads/field_extractors.h"
#include "app/heads/governing_law.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QRegularExpression>
#include <algorithm>
#include <atomic>
#include <cmath>

namespace cw::heads {

double CategoryScore::precision() const
{
    const int d = truePositives + falsePositives;
    return d ? double(truePositives) / d : (falseNegatives ? 0.0 : 1.0);
}
double CategoryScore::recall() const
{
    const int d = truePositives + falseNegatives;
    return d ? double(truePositives) / d : (falsePositives ? 0.0 : 1.0);
}
double CategoryScore::f1() const
{
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
}

QList<Finding> fastFindings(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::vector<std::vector<float>>& scores)
{
    QList<Finding> findings;
    const QSet<QString>& documentLevel = documentLevelCategories();
    QList<Finding> documentLevelByModel; // document-level categories the model found present
    QSet<QString> decided;
    for (Finding& f : classifyCandidates(model, text, candidates, scores)) {
        if (!documentLevel.contains(f.category)) {
            findings.append(std::move(f));
        } else {
            decided.insert(f.category);
            documentLevelByModel.append(std::move(f));
        }
    }
    // A date the model learns (one not in ruleDecidedCategories) is reported where the model finds
    // the contract has one: at the rule's date when the rule found it, else at the model's best
    // sentence. A model without the category (older files) leaves the rule alone.
    QSet<QString> ruled;
    for (Finding& f : documentLevelFindings(text)) {
        if (model.categoryIndex(f.category) < 0 || decided.contains(f.category)) {
            ruled.insert(f.category);
            findings.append(std::move(f));
        }
    }
    for (Finding& f : documentLevelByModel) {
        if (!ruled.contains(f.category))
            findings.append(std::move(f));
    }
    addFindingFields(findings);
    // The governing law is a fact about the whole contract: the sentence that states it
    // best wins, whether or not the classifier picked it, and carries the law.
    const int lawIndex = model.categoryIndex(QStringLiteral("Governing Law"));
    std::vector<float> lawScores;
    if (lawIndex >= 0) {
        for (const auto& row : scores)
            lawScores.push_back(row[size_t(lawIndex)]);
    }
    const GoverningLawChoice choice = chooseGoverningLaw(text, candidates, lawScores);
    if (!choice.law.isEmpty()) {
        const ClauseCandidate& c = candidates[choice.candidate];
        bool placed = false;
        bool classified = false;
        for (Finding& f : findings) {
            if (f.category != QLatin1String("Governing Law"))
                continue;
            classified = true;
            if (f.start == c.start && f.end == c.end) {
                f.fields["law"] = choice.law;
                f.fields["laws"] = QJsonArray::fromStringList(choice.laws);
                f.fields["governing"] = true;
                placed = true;
            }
        }
        if (!placed && (classified || choice.strength >= 1.0)) {
            Finding f;
            f.category = QStringLiteral("Governing Law");
            f.start = c.start;
            f.end = c.end;
            f.text = text.mid(c.start, c.end - c.start);
            f.clauseIndex = c.clauseIndex;
            if (lawIndex >= 0) {
                const float s = lawScores[size_t(choice.candidate)];
                f.score = double(s);
                if (const auto& calibration = model.categories()[lawIndex].calibration)
                    f.confidence = calibration->probability(s);
            }
            f.source = QStringLiteral("fast");
            f.rationale = QStringLiteral("names the law that governs the contract");
            const QJsonObject more = fieldsForFinding(f.category, f.text);
            for (auto it = more.begin(); it != more.end(); ++it)
                f.fields.insert(it.key(), it.value());
            f.fields["law"] = choice.law;
            f.fields["laws"] = QJsonArray::fromStringList(choice.laws);
            f.fields["governing"] = true;
            findings.append(f);
        }
    }
    return findings;
}

QString governingLawOf(const QList<Finding>& findings)
{
    double best = -1.0;
    QString law;
    for (const Finding& f : findings) {
        if (f.category != QLatin1String("Governing Law") || !f.fields.contains("law"))
            continue;
        if (f.fields.value("governing").toBool()) {
            QStringList laws;
            for (const QJsonValue& v : f.fields.value("laws").toArray())
                laws.append(v.toString());
            return laws.isEmpty() ? f.fields.value("law").toString() : laws.join("; ");
        }
        if (f.score > best) {
            best = f.score;
            law = f.fields.value("law").toString();
        }
    }
    return law;
}

namespace {

// Every model a k-fold evaluation needs, fitted once: for each pair of folds {f, g}, a model
// trained without both. Its scores on g are held-out scores that fold f's thresholds are
// chosen on, and fold f is scored by the average of the pair models without f, as
// trainClauseModel ships the average of its inner-fold models. The test fold never reaches
// the models or the thresholds it is scored with.
struct FoldModels {
    std::vector<ClauseModel> outer;
    std::vector<std::vector<HeldOutScores>> heldOut; // per outer fold
};

FoldModels fitFoldModels(const std::vector<PreparedContract>& prepared, int folds,
    const TrainingOptions& options, const std::function<void(const QString&)>& log)
{
    const int n = int(prepared.size());
    std::vector<std::pair<int, int>> pairs;
    for (int f = 0; f < folds; ++f) {
        for (int g = f + 1; g < folds; ++g)
            pairs.push_back({ f, g });
    }
    FoldModels out;
    out.outer.resize(size_t(folds));
    out.heldOut.resize(size_t(folds));
    std::vector<ClauseModel> pairModels(pairs.size());
    // pairScores[p][i]: scores of contract i (in fold f or g of pair p) by the pair's model.
    std::vector<std::vector<std::vector<std::vector<float>>>> pairScores(pairs.size());
    std::atomic<int> done { 0 };
    const int tasks = int(pairs.size());
    runParallel(tasks, options.threads, [&](int t) {
        const auto [f, g] = pairs[size_t(t)];
        std::vector<int> train;
        for (int i = 0; i < n; ++i) {
            if (i % folds != f && i % folds != g)
                train.push_back(i);
        }
        pairModels[size_t(t)] = fitClauseModel(prepared, train, options);
        auto& scores = pairScores[size_t(t)];
        scores.resize(size_t(n));
        for (int i = 0; i < n; ++i) {
            if (i % folds == f || i % folds == g)
                scores[size_t(i)] = scoreContract(pairModels[size_t(t)], prepared[size_t(i)]);
        }
        if (log)
            log(QStringLiteral("model %1/%2 fitted").arg(++done).arg(tasks));
    });
    for (size_t p = 0; p < pairs.size(); ++p) {
        const auto [f, g] = pairs[p];
        for (int i = 0; i < n; ++i) {
            if (i % folds == g)
                out.heldOut[size_t(f)].push_back({ i, pairScores[p][size_t(i)] });
            else if (i % folds == f)
                out.heldOut[size_t(g)].push_back({ i, pairScores[p][size_t(i)] });
        }
    }
    for (int f = 0; f < folds; ++f) {
        std::vector<ClauseModel> without;
        for (size_t p = 0; p < pairs.size(); ++p) {
            if (pairs[p].first == f || pairs[p].second == f)
                without.push_back(pairModels[p]);
        }
        out.outer[size_t(f)] = averageModels(without, options.keepWeights);
    }
    return out;
}

} // namespace

namespace {

// Runs the fast heads of `model` on one held-out contract exactly as a review does (the
// refiner, when there is one, after them) and adds its scores to `result`.
Result<void> scoreContractInto(EvaluationResult& result, const ClauseModel& model,
    const PreparedContract& p, const std::function<void(const QString&)>& log,
    const FindingsRefiner& refine, double& totalMs)
{
    const QStringList& names = cuadCategories();
    const QString& text = p.source->text;
    QElapsedTimer timer;
    timer.start();
    // Recompute features as a review would, to time the whole path honestly.
    const QList<ClauseCandidate> candidates = buildCandidates(text, {});
    const auto scores = scoreCandidates(model, text, candidates);
    QList<Finding> findings = fastFindings(model, text, candidates, scores);
    totalMs += double(timer.nsecsElapsed()) / 1e6;
    if (refine) {
        auto refined = refine(*p.source, findings);
        if (!refined)
            return makeError(p.source->id.toStdString() + ": " + refined.error().message);
        findings = std::move(*refined);
    }
    for (int k = 0; k < names.size(); ++k) {
        CategoryScore& s = result.categories[k];
        QList<const Finding*> mine;
        for (const Finding& f : findings) {
            if (f.category == names[k])
                mine.append(&f);
        }
        const bool gold = (p.present >> k) & 1u;
        const bool predicted = !mine.isEmpty();
        s.truePositives += gold && predicted;
        s.falsePositives += !gold && predicted;
        s.falseNegatives += gold && !predicted;
        const auto spans = p.source->spans.value(names[k]);
        s.spanGold += spans.size();
        s.spanPredicted += mine.size();
        for (const Finding* f : mine) {
            bool ok = false;
            for (const auto& [gs, ge] : spans)
                ok = ok || spansMatch(p.nonSpace, f->start, f->end, gs, ge);
            s.spanCorrect += ok;
            if (!f->confidence) {
                ++result.uncalibratedFindings;
                continue;
            }
            const double c = *f->confidence;
            const size_t bin = std::min<size_t>(9, size_t(c * 10.0));
            ++result.calibratedFindings;
            result.brier += (c - double(ok)) * (c - double(ok));
            result.meanConfidence += c;
            result.shareRight += double(ok);
            result.binConfidence[bin] += c;
            result.binRight[bin] += double(ok);
            ++result.binCount[bin];
        }
        for (const auto& [gs, ge] : spans) {
            bool ok = false;
            for (const Finding* f : mine)
                ok = ok || spansMatch(p.nonSpace, f->start, f->end, gs, ge);
            s.spanFound += ok;
        }
    }
    const QString goldLaw = p.source->answers.value("Governing Law").trimmed();
    const QString law = governingLawOf(findings);
    if (!goldLaw.isEmpty()) {
        ++result.lawScored;
        const bool ok = jurisdictionMatches(goldLaw, law);
        result.lawCorrect += ok;
        if (!ok && log)
            log(QStringLiteral("law: %1: gold '%2', found '%3'").arg(p.source->id, goldLaw, law));
    } else {
        ++result.lawAbsent;
        result.lawAbsentCorrect += law.isEmpty();
    }
    for (const QString& category :
        { QStringLiteral("Agreement Date"), QStringLiteral("Effective Date") }) {
        const auto goldDate = parseShortDate(p.source->answers.value(category));
        if (!goldDate)
            continue;
        QString got;
        for (const Finding& f : findings) {
            if (f.category == category && f.fields.contains("date")) {
                got = f.fields.value("date").toString();
                break;
            }
        }
        const bool ok = got == goldDate->toString(Qt::ISODate);
        if (!ok && log)
            log(QStringLiteral("date: %1: %2 gold %3, found '%4'")
                    .arg(p.source->id, category, goldDate->toString(Qt::ISODate), got));
        if (category == "Agreement Date") {
            ++result.agreementScored;
            result.agreementCorrect += ok;
        } else {
            ++result.effectiveScored;
            result.effectiveCorrect += ok;
        }
    }
    return {};
}

// The totals of `result` from its per-category counts.
void finishEvaluation(EvaluationResult& result, double totalMs)
{
    long predicted = 0, correct = 0, gold = 0, found = 0;
    double sumF1 = 0.0;
    for (const CategoryScore& s : result.categories) {
        sumF1 += s.f1();
        predicted += s.spanPredicted, correct += s.spanCorrect, gold += s.spanGold,
            found += s.spanFound;
    }
    result.macroF1 = sumF1 / double(result.categories.size());
    result.spanPrecision = predicted ? double(correct) / double(predicted) : 0.0;
    result.spanRecall = gold ? double(found) / double(gold) : 0.0;
    result.spanF1 = result.spanPrecision + result.spanRecall > 0
        ? 2 * result.spanPrecision * result.spanRecall / (result.spanPrecision + result.spanRecall)
        : 0.0;
    result.millisecondsPerContract
        = result.contracts == 0 ? 0.0 : totalMs / double(result.contracts);
    if (result.calibratedFindings > 0) {
        const double n = double(result.calibratedFindings);
        result.brier /= n;
        result.meanConfidence /= n;
        result.shareRight /= n;
        for (size_t b = 0; b < result.binCount.size(); ++b) {
            if (result.binCount[b] > 0)
                result.expectedCalibrationError
                    += std::abs(result.binConfidence[b] - result.binRight[b]) / n;
        }
    }
}

} // namespace

Result<EvaluationResult> evaluateHeads(const QList<LabelledContract>& contracts, int folds,
    const TrainingOptions& options, const std::function<void(const QString&)>& log,
    const FindingsRefiner& refine, int limit)
{
    EvaluationResult result;
    const int scored = limit > 0 ? std::min(limit, int(contracts.size())) : int(contracts.size());
    result.contracts = scored;
    result.folds = folds;
    QElapsedTimer clock;
    clock.start();
    const std::vector<PreparedContract> prepared
        = prepareContracts(contracts, options.hashBits, options.threads);
    if (log)
        log(QStringLiteral("prepared %1 contracts in %2 s")
                .arg(contracts.size())
                .arg(double(clock.elapsed()) / 1000.0, 0, 'f', 1));
    const FoldModels models = fitFoldModels(prepared, folds, options, log);
    if (log)
        log(QStringLiteral("fitted %1 models in %2 s")
                .arg(folds * (folds - 1) / 2)
                .arg(double(clock.elapsed()) / 1000.0, 0, 'f', 1));
    for (const QString& n : cuadCategories())
        result.categories.append(CategoryScore { n });
    double totalMs = 0.0;
    for (int fold = 0; fold < folds; ++fold) {
        const ClauseModel model = withThresholds(models.outer[size_t(fold)], prepared,
            models.heldOut[size_t(fold)], options.presenceCues);
        for (int i = fold; i < scored; i += folds) {
            if (auto ok
                = scoreContractInto(result, model, prepared[size_t(i)], log, refine, totalMs);
                !ok)
                return ok.error();
        }
    }
    finishEvaluation(result, totalMs);
    return result;
}

Result<EvaluationResult> evaluateTrainedModel(const QList<LabelledContract>& contracts,
    const ClauseModel& model, int threads, const std::function<void(const QString&)>& log,
    const FindingsRefiner& refine, int limit)
{
    EvaluationResult result;
    const int scored = limit > 0 ? std::min(limit, int(contracts.size())) : int(contracts.size());
    result.contracts = scored;
    result.folds = 0;
    const std::vector<PreparedContract> prepared
        = prepareContracts(contracts, model.hashBits(), threads);
    for (const QString& n : cuadCategories())
        result.categories.append(CategoryScore { n });
    double totalMs = 0.0;
    for (int i = 0; i < scored; ++i) {
        if (auto ok = scoreContractInto(result, model, prepared[size_t(i)], log, refine, totalMs);
            !ok)
            return ok.error();
    }
    finishEvaluation(result, totalMs);
    return result;
}

QString EvaluationResult::table() const
{
    QString out;
    out += QStringLiteral("%1  %2 %3 %4  %5 %6 %7  %8 %9 %10\n")
               .arg("category", -36)
               .arg("P", 5)
               .arg("R", 5)
               .arg("F1", 5)
               .arg("TP", 4)
               .arg("FP", 4)
               .arg("FN", 4)
               .arg("spP", 5)
               .arg("spR", 5)
               .arg("spF1", 5);
    for (const CategoryScore& s : categories) {
        const double sp = s.spanPredicted ? double(s.spanCorrect) / double(s.spanPredicted) : 0.0;
        const double sr = s.spanGold ? double(s.spanFound) / double(s.spanGold) : 0.0;
        const double sf = sp + sr > 0 ? 2 * sp * sr / (sp + sr) : 0.0;
        out += QStringLiteral("%1  %2 %3 %4  %5 %6 %7  %8 %9 %10\n")
                   .arg(s.category, -36)
                   .arg(s.precision(), 5, 'f', 2)
                   .arg(s.recall(), 5, 'f', 2)
                   .arg(s.f1(), 5, 'f', 2)
                   .arg(s.truePositives, 4)
                   .arg(s.falsePositives, 4)
                   .arg(s.falseNegatives, 4)
                   .arg(sp, 5, 'f', 2)
                   .arg(sr, 5, 'f', 2)
                   .arg(sf, 5, 'f', 2);
    }
    out += folds > 0
        ? QStringLiteral("\n%1 contracts, %2-fold cross-validation\n").arg(contracts).arg(folds)
        : QStringLiteral("\n%1 contracts, scored with a trained model (no training)\n")
              .arg(contracts);
    out += QStringLiteral("contract-level macro-F1 (41 categories): %1\n").arg(macroF1, 0, 'f', 3);
    out += QStringLiteral("span-level micro P/R/F1: %1 / %2 / %3\n")
               .arg(spanPrecision, 0, 'f', 3)
               .arg(spanRecall, 0, 'f', 3)
               .arg(spanF1, 0, 'f', 3);
    out += QStringLiteral(
        "governing law: %1/%2 = %3 of contracts with one; %4/%5 without one named none\n")
               .arg(lawCorrect)
               .arg(lawScored)
               .arg(lawScored ? double(lawCorrect) / lawScored : 0.0, 0, 'f', 3)
               .arg(lawAbsentCorrect)
               .arg(lawAbsent);
    out += QStringLiteral("agreement date: %1/%2 = %3; effective date: %4/%5 = %6\n")
               .arg(agreementCorrect)
               .arg(agreementScored)
               .arg(agreementScored ? double(agreementCorrect) / agreementScored : 0.0, 0, 'f', 3)
               .arg(effectiveCorrect)
               .arg(effectiveScored)
               .arg(effectiveScored ? double(effectiveCorrect) / effectiveScored : 0.0, 0, 'f', 3);
    out += QStringLiteral("confidence: %1 findings with one (mean %2, right %3, Brier %4, "
                          "ECE %5); %6 without (no calibration)\n")
               .arg(calibratedFindings)
               .arg(meanConfidence, 0, 'f', 3)
               .arg(shareRight, 0, 'f', 3)
               .arg(brier, 0, 'f', 3)
               .arg(expectedCalibrationError, 0, 'f', 3)
               .arg(uncalibratedFindings);
    out += QStringLiteral("fast heads: %1 ms per contract (features, classifier, extractors)\n")
               .arg(millisecondsPerContract, 0, 'f', 1);
    return out;
}

QJsonObject EvaluationResult::toJson() const
{
    QJsonObject perCategory;
    for (const CategoryScore& s : categories) {
        perCategory[s.category]
            = QJsonObject { { "precision", s.precision() }, { "recall", s.recall() },
                  { "f1", s.f1() }, { "span_predicted", qint64(s.spanPredicted) },
                  { "span_correct", qint64(s.spanCorrect) }, { "span_gold", qint64(s.spanGold) },
                  { "span_found", qint64(s.spanFound) } };
    }
    return QJsonObject { { "contracts", contracts }, { "folds", folds }, { "macro_f1", macroF1 },
        { "span_precision", spanPrecision }, { "span_recall", spanRecall }, { "span_f1", spanF1 },
        { "governing_law_accuracy", lawScored ? double(lawCorrect) / lawScored : 0.0 },
        { "governing_law_scored", lawScored }, { "governing_law_absent_correct", lawAbsentCorrect },
        { "governing_law_absent", lawAbsent },
        { "agreement_date_accuracy",
            agreementScored ? double(agreementCorrect) / agreementScored : 0.0 },
        { "effective_date_accuracy",
            effectiveScored ? double(effectiveCorrect) / effectiveScored : 0.0 },
        { "ms_per_contract", millisecondsPerContract },
        { "calibrated_findings", calibratedFindings },
        { "uncalibrated_findings", uncalibratedFindings }, { "confidence_brier", brier },
        { "confidence_ece", expectedCalibrationError }, { "categories", perCategory } };
}

} // namespace cw::heads
