#include "app/heads/cuad_classifier.h"

#include "app/heads/presence_cues.h"
#include "app/heads/text_features.h"

#include <QHash>
#include <QRegularExpression>

namespace cw::heads {

namespace {

const QHash<QString, QRegularExpression>& categoryGates()
{
    static const QHash<QString, QRegularExpression> gates = [] {
        const auto ci = QRegularExpression::CaseInsensitiveOption;
        QHash<QString, QRegularExpression> g;
        auto add = [&](const char* category, const char* pattern) {
            g.insert(
                QString::fromUtf8(category), QRegularExpression(QString::fromUtf8(pattern), ci));
        };
        add("Source Code Escrow", "escrow");
        add("Most Favored Nation", "favou?r|no less|not less|better|lower|lowest|best|equal|same");
        add("Price Restrictions", "pric|rate|fee|discount|charge|cost");
        add("Unlimited/All-You-Can-Eat-License",
            "unlimited|enterprise|all you|any number|unrestrict|without "
            "limit|royalty|fully|free|all ");
        add("No-Solicit Of Customers", "solicit|induce|entice|divert|interfere|customer|client");
        add("Non-Disparagement",
            "disparag|derogat|negative|reputation|defam|critic|advers|harm|detriment");
        add("Joint Ip Ownership", "joint|co-own|both parties|shared|equal|together|common");
        add("Third Party Beneficiary", "beneficiar|third part|enforce|right");
        add("Liquidated Damages", "liquidated|fee|penalt|damages|pay");
        add("Change Of Control",
            "control|merger|merge|acqui|substantially all|reorgani|consolidat|sale|operation of "
            "law|owner");
        add("Covenant Not To Sue",
            "contest|challenge|sue\\b|suit|claim|action|attack|dispute|oppose|impair|validity|not "
            "to");
        add("Affiliate License-Licensee", "affiliat|subsidiar|related|group");
        add("Affiliate License-Licensor", "affiliat|subsidiar|related|group");
        add("Irrevocable Or Perpetual License", "perpetu|irrevoc");
        add("Non-Transferable License", "transfer|assign|sublicens");
        add("Insurance", "insur");
        add("Audit Rights", "audit|inspect|examin|record|books|access");
        add("No-Solicit Of Employees", "solicit|hire|employ|recruit|induce|engage");
        return g;
    }();
    return gates;
}

} // namespace

void applyCategoryGates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, std::vector<std::vector<float>>& scores)
{
    const auto& gates = categoryGates();
    const auto& categories = model.categories();
    for (int k = 0; k < categories.size(); ++k) {
        const auto gate = gates.constFind(categories[k].category);
        if (gate == gates.constEnd())
            continue;
        for (size_t i = 0; i < scores.size(); ++i) {
            if (scores[i][size_t(k)] < 0.05f)
                continue;
            const ClauseCandidate& c = candidates[qsizetype(i)];
            if (!gate->match(QStringView(text).mid(c.start, c.end - c.start)).hasMatch())
                scores[i][size_t(k)] = 0.0f;
        }
    }
}

PresenceDecision decidePresence(const CategoryModel& c,
    const std::vector<std::vector<float>>& scores, int k, const std::vector<int>& cued)
{
    PresenceDecision d;
    float topScore = -1.0f;
    for (size_t i = 0; i < scores.size(); ++i) {
        if (scores[i][size_t(k)] > topScore) {
            topScore = scores[i][size_t(k)];
            d.top = int(i);
        }
    }
    if (c.presence) {
        d.present = d.top >= 0
            && c.presence->probability(presenceFeatures(scores, k, cued, c.qualified))
                >= double(c.presenceThreshold);
        return d;
    }
    if (d.top >= 0 && topScore >= c.presenceThreshold) {
        d.present = true;
        return d;
    }
    if (c.cueThreshold > 1.0f)
        return d;
    float cueScore = -1.0f;
    int cueTop = -1;
    for (int i : cued) {
        if (scores[size_t(i)][size_t(k)] > cueScore) {
            cueScore = scores[size_t(i)][size_t(k)];
            cueTop = i;
        }
    }
    if (cueTop >= 0 && cueScore >= c.cueThreshold) {
        d.present = true;
        d.top = cueTop;
        d.byCue = true;
    }
    return d;
}

QList<Finding> classifyCandidates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::vector<std::vector<float>>& scores)
{
    QList<Finding> findings;
    const auto& categories = model.categories();
    for (int k = 0; k < categories.size(); ++k) {
        const CategoryModel& c = categories[k];
        const std::vector<int> cued = c.cueThreshold <= 1.0f || c.presence
            ? cueCandidates(c.category, text, candidates)
            : std::vector<int> {};
        const PresenceDecision presence = decidePresence(c, scores, k, cued);
        if (!presence.present)
            continue;
        for (size_t i = 0; i < scores.size(); ++i) {
            const float s = scores[i][size_t(k)];
            if (int(i) != presence.top && (presence.byCue || s < c.spanThreshold))
                continue;
            const ClauseCandidate& cand = candidates[qsizetype(i)];
            Finding f;
            f.category = c.category;
            f.start = cand.start;
            f.end = cand.end;
            f.clauseIndex = cand.clauseIndex;
            f.text = text.mid(cand.start, cand.end - cand.start);
            f.score = double(s);
            if (c.calibration)
                f.confidence = c.calibration->probability(s);
            f.source = QStringLiteral("fast");
            f.rationale = presence.byCue
                ? QStringLiteral("clause classifier score %1 with the category's wording "
                                 "(threshold %2)")
                      .arg(double(s), 0, 'f', 2)
                      .arg(double(c.cueThreshold), 0, 'f', 2)
                : QStringLiteral("clause classifier score %1 (threshold %2)")
                      .arg(double(s), 0, 'f', 2)
                      .arg(double(c.presenceThreshold), 0, 'f', 2);
            findings.append(std::move(f));
        }
    }
    return findings;
}

std::vector<std::vector<float>> scoreCandidates(const ClauseModel& model, const QString& text,
    const QList<ClauseCandidate>& candidates, const std::function<bool()>& cancelled)
{
    std::vector<std::vector<float>> scores(size_t(candidates.size()));
    for (int i = 0; i < candidates.size(); ++i) {
        if (cancelled && i % 128 == 0 && cancelled())
            return {};
        model.score(candidateFeatures(text, candidates, i, model.hashBits()), scores[size_t(i)]);
    }
    applyCategoryGates(model, text, candidates, scores);
    return scores;
}

QList<Finding> classifyText(const ClauseModel& model, const QString& text,
    const QList<Clause>& clauses, const std::function<bool()>& cancelled)
{
    const QList<ClauseCandidate> candidates = buildCandidates(text, clauses);
    const auto scores = scoreCandidates(model, text, candidates, cancelled);
    if (scores.size() != size_t(candidates.size()))
        return {};
    return classifyCandidates(model, text, candidates, scores);
}

} // namespace cw::heads
