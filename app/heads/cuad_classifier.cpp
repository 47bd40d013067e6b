#include "app/heads/cuad_classifier.h"

#include "app/heads/text_features.h"

namespace cw::heads {

QList<Finding> classifyCandidates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::vector<std::vector<float>>& scores)
{
    QList<Finding> findings;
    const auto& categories = model.categories();
    for (int k = 0; k < categories.size(); ++k) {
        const CategoryModel& c = categories[k];
        int top = -1;
        float topScore = -1.0f;
        for (size_t i = 0; i < scores.size(); ++i) {
            if (scores[i][size_t(k)] > topScore) {
                topScore = scores[i][size_t(k)];
                top = int(i);
            }
        }
        if (top < 0 || topScore < c.presenceThreshold)
            continue;
        for (size_t i = 0; i < scores.size(); ++i) {
            const float s = scores[i][size_t(k)];
            if (s < c.spanThreshold && int(i) != top)
                continue;
            const ClauseCandidate& cand = candidates[qsizetype(i)];
            Finding f;
            f.category = c.category;
            f.start = cand.start;
            f.end = cand.end;
            f.clauseIndex = cand.clauseIndex;
            f.text = text.mid(cand.start, cand.end - cand.start);
            f.confidence = double(s);
            f.source = QStringLiteral("fast");
            f.rationale = QStringLiteral("clause classifier score %1 (threshold %2)")
                              .arg(double(s), 0, 'f', 2)
                              .arg(double(c.presenceThreshold), 0, 'f', 2);
            findings.append(std::move(f));
        }
    }
    return findings;
}

QList<Finding> classifyText(const ClauseModel& model, const QString& text,
    const QList<Clause>& clauses, const std::function<bool()>& cancelled)
{
    const QList<ClauseCandidate> candidates = buildCandidates(text, clauses);
    std::vector<std::vector<float>> scores(size_t(candidates.size()));
    for (int i = 0; i < candidates.size(); ++i) {
        if (cancelled && i % 256 == 0 && cancelled())
            return {};
        model.score(candidateFeatures(text, candidates, i, model.hashBits()), scores[size_t(i)]);
    }
    return classifyCandidates(model, text, candidates, scores);
}

} // namespace cw::heads
