#include "app/llm_review/question_planner.h"

#include <QHash>
#include <algorithm>

namespace cw::llm {

namespace {

// A clause whose own text is shorter than this is a heading over its sub-clauses: its
// passage takes the sub-clauses too.
constexpr qsizetype kMinOwnChars = 120;

qsizetype passageEnd(const Clause& c)
{
    return c.ownEnd > c.start && c.ownEnd - c.start >= kMinOwnChars ? c.ownEnd : c.end;
}

struct Span {
    qsizetype start = 0;
    qsizetype end = 0;
    int clauseIndex = -1;
};

// The clause's own text (before its sub-clauses), widened to hold the finding and cut to
// `maxChars` around it.
Span passageSpan(const QString& text, const QList<Clause>& clauses, qsizetype fs, qsizetype fe,
    int clauseIndex, int maxChars)
{
    Span s { fs, fe, -1 };
    if (clauseIndex >= 0 && clauseIndex < clauses.size()) {
        const Clause& c = clauses[clauseIndex];
        s = { std::min(c.start, fs), std::max(passageEnd(c), fe), clauseIndex };
    }
    if (s.end - s.start > maxChars) {
        const qsizetype keepEnd = std::min(fe, fs + maxChars);
        const qsizetype slack = maxChars - (keepEnd - fs);
        s.start = std::max(s.start, fs - slack / 2);
        s.end = std::min(s.end, s.start + maxChars);
        s.end = std::max(s.end, keepEnd);
    }
    while (s.start < s.end && s.start < text.size() && text[s.start].isSpace())
        ++s.start;
    while (s.end > s.start && s.end <= text.size() && text[s.end - 1].isSpace())
        --s.end;
    return s;
}

class PassageTable {
public:
    PassageTable(const Document& document, const QList<Clause>& clauses)
        : m_document(document)
        , m_clauses(clauses)
    {
    }

    // The id of the passage for this span: an existing one that covers most of it, or new.
    int idFor(const Span& span)
    {
        for (const Passage& p : m_passages) {
            const qsizetype overlap = std::min(p.end, span.end) - std::max(p.start, span.start);
            if (overlap > 0 && overlap * 2 >= span.end - span.start)
                return p.id;
        }
        Passage p;
        p.id = int(m_passages.size()) + 1;
        p.start = span.start;
        p.end = span.end;
        p.clauseIndex = span.clauseIndex;
        if (span.clauseIndex >= 0) {
            const Clause& c = m_clauses[span.clauseIndex];
            p.label = (c.number + QLatin1Char(' ') + c.heading).simplified();
            p.page = c.page;
        }
        if (p.page == 0)
            p.page = m_document.pageAt(span.start);
        m_passages.append(p);
        return p.id;
    }

    QList<Passage> take() { return std::move(m_passages); }

private:
    const Document& m_document;
    const QList<Clause>& m_clauses;
    QList<Passage> m_passages;
};

// Clauses ranked by how often they mention the group's keywords (a heading hit counts
// three times): the fallback when the fast head found nothing of the group.
QList<int> keywordClauses(
    const Document& document, const QList<Clause>& clauses, const CategoryGroup& group, int limit)
{
    QList<QPair<int, int>> scored; // score, clause index
    for (const Clause& c : clauses) {
        const QString body = document.text.mid(c.start, passageEnd(c) - c.start).toLower();
        const QString heading = c.heading.toLower();
        int score = 0;
        for (const CategoryQuestion& q : group.categories) {
            for (const QString& k : q.keywords) {
                score += int(body.count(k));
                score += heading.contains(k) ? 3 : 0;
            }
        }
        if (score > 0)
            scored.append({ score, c.index });
    }
    std::stable_sort(scored.begin(), scored.end(),
        [](const auto& a, const auto& b) { return a.first > b.first; });
    QList<int> out;
    for (const auto& [score, index] : scored) {
        if (out.size() >= limit)
            break;
        out.append(index);
    }
    return out;
}

} // namespace

QuestionPlan planQuestions(const Document& document, const QList<Clause>& clauses,
    const QList<Finding>& fastFindings, const QList<CategoryGroup>& groups,
    const PlanLimits& limits)
{
    QHash<QString, QList<const Finding*>> byCategory;
    for (const Finding& f : fastFindings)
        byCategory[f.category].append(&f);
    for (auto& list : byCategory) {
        std::stable_sort(list.begin(), list.end(),
            [](const Finding* a, const Finding* b) { return a->score > b->score; });
    }

    PassageTable table(document, clauses);
    QuestionPlan plan;
    for (const CategoryGroup& group : groups) {
        ModelQuestion question;
        question.groupId = group.id;
        question.categories = group.categories;
        auto add = [&](int id) {
            if (!question.passageIds.contains(id)
                && question.passageIds.size() < limits.passagesPerQuestion)
                question.passageIds.append(id);
        };
        // Round-robin over the categories so that each gets its best passage first.
        for (int rank = 0; rank < limits.passagesPerCategory; ++rank) {
            for (const CategoryQuestion& c : group.categories) {
                const auto& found = byCategory.value(c.category);
                if (rank < found.size()) {
                    const Finding& f = *found[rank];
                    add(table.idFor(passageSpan(document.text, clauses, f.start, f.end,
                        f.clauseIndex, limits.passageChars)));
                }
            }
        }
        if (question.passageIds.isEmpty()) {
            question.fromKeywords = true;
            for (int index : keywordClauses(document, clauses, group, limits.keywordPassages)) {
                const Clause& c = clauses[index];
                add(table.idFor(passageSpan(document.text, clauses, c.start,
                    std::min(passageEnd(c), c.start + limits.passageChars), index,
                    limits.passageChars)));
            }
        }
        if (question.passageIds.isEmpty())
            continue;
        question.id = int(plan.questions.size());
        plan.questions.append(question);
    }
    plan.passages = table.take();
    return plan;
}

} // namespace cw::llm
