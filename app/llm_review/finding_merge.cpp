#include "app/llm_review/finding_merge.h"

#include <QSet>

namespace cw::llm {

namespace {

bool overlaps(qsizetype a0, qsizetype a1, qsizetype b0, qsizetype b1)
{
    return a0 < b1 && b0 < a1;
}

bool inPassages(const Finding& f, const QuestionPlan& plan, const QList<int>& ids)
{
    for (int id : ids) {
        const Passage* p = plan.passage(id);
        if (p && overlaps(f.start, f.end, p->start, p->end))
            return true;
    }
    return false;
}

QString withNote(const QString& rationale, const QString& note)
{
    return rationale.isEmpty() ? note : rationale + QStringLiteral(" ") + note;
}

} // namespace

QList<Finding> mergeFindings(const QList<Finding>& fastFindings, const ModelReviewResult& model)
{
    QList<Finding> out = fastFindings;
    const qsizetype fastCount = out.size();
    for (const QuestionAnswer& answer : model.answers) {
        if (!answer.answered)
            continue;
        const ModelQuestion& question = model.plan.questions[answer.questionId];
        for (const CategoryVerdict& v : answer.verdicts) {
            QList<qsizetype> candidates;
            for (qsizetype i = 0; i < fastCount; ++i) {
                if (out[i].category == v.category
                    && inPassages(out[i], model.plan, question.passageIds))
                    candidates.append(i);
            }
            if (!v.present) {
                for (qsizetype i : candidates) {
                    out[i].needsHumanReview = true;
                    out[i].rationale = withNote(out[i].rationale,
                        QStringLiteral("The language model found no %1 clause here: %2")
                            .arg(v.category, answer.note));
                }
                continue;
            }
            QSet<qsizetype> agreed;
            for (const Finding& found : model.findings) {
                if (found.category != v.category)
                    continue;
                qsizetype match = -1;
                for (qsizetype i : candidates) {
                    if (overlaps(out[i].start, out[i].end, found.start, found.end)) {
                        match = i;
                        break;
                    }
                }
                if (match >= 0 && agreed.contains(match))
                    continue; // a second model finding on the same clause adds nothing
                if (match >= 0) {
                    Finding merged = found;
                    for (auto it = out[match].fields.begin(); it != out[match].fields.end(); ++it) {
                        if (!merged.fields.contains(it.key()))
                            merged.fields.insert(it.key(), it.value());
                    }
                    if (!merged.confidence
                        || (out[match].confidence && *out[match].confidence > *merged.confidence))
                        merged.confidence = out[match].confidence;
                    merged.score = std::max(found.score, out[match].score);
                    out[match] = merged;
                    agreed.insert(match);
                } else {
                    Finding added = found;
                    added.needsHumanReview = true;
                    out.append(added);
                }
            }
            for (qsizetype i : candidates) {
                if (agreed.contains(i))
                    continue;
                out[i].needsHumanReview = true;
                out[i].rationale = withNote(out[i].rationale,
                    QStringLiteral("The language model placed %1 elsewhere: %2")
                        .arg(v.category, answer.note));
            }
        }
    }
    return out;
}

} // namespace cw::llm
