#include "app/heads/builtin_heads.h"

#include "app/heads/cuad_classifier.h"
#include "app/heads/cuad_dataset.h"
#include "app/heads/field_extractors.h"
#include "app/heads/heads_evaluation.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>

namespace cw::heads {

HeadMetadata CuadClassifierHead::metadata() const
{
    return { "cuad_classifier", "CUAD clause classifier", "1.0", HeadKind::Fast, cuadCategories() };
}

Result<void> CuadClassifierHead::load(const QString& dataDir)
{
    if (dataDir.isEmpty())
        return makeError(std::string("cannot find ") + kModelFile
            + " (the plugin folder is missing; run train-heads or reinstall)");
    auto model = ClauseModel::load(QDir(dataDir).filePath(kModelFile));
    if (!model)
        return model.error();
    m_model = std::move(model.value());
    m_loaded = true;
    return {};
}

Result<QList<Finding>> CuadClassifierHead::find(
    const Document& document, const QList<Clause>& clauses, const HeadRunContext& context) const
{
    if (!m_loaded)
        return makeError("cuad_classifier: no model loaded");
    const QString& text = document.text;
    const QList<ClauseCandidate> candidates = buildCandidates(text, clauses);
    std::vector<std::vector<float>> scores(size_t(candidates.size()));
    for (int i = 0; i < candidates.size(); ++i) {
        if (i % 128 == 0) {
            if (context.cancelled && context.cancelled())
                return makeError("cancelled");
            if (context.progress)
                context.progress(i, int(candidates.size()));
        }
        m_model.score(
            candidateFeatures(text, candidates, i, m_model.hashBits()), scores[size_t(i)]);
    }
    applyCategoryGates(m_model, text, candidates, scores);
    QList<Finding> findings = fastFindings(m_model, text, candidates, scores);
    for (Finding& f : findings)
        f.page = document.pageAt(f.start);
    return findings;
}

HeadMetadata FieldExtractorHead::metadata() const
{
    return { "field_extractors", "Field extractors", "1.0", HeadKind::Fast, {} };
}

Result<void> FieldExtractorHead::load(const QString&)
{
    return {};
}

Result<QList<Finding>> FieldExtractorHead::find(
    const Document& document, const QList<Clause>& clauses, const HeadRunContext& context) const
{
    QList<Finding> out;
    for (const Clause& c : clauses) {
        if (context.cancelled && context.cancelled())
            return makeError("cancelled");
        const qsizetype end = c.ownEnd > c.start ? c.ownEnd : c.end;
        const QString text = document.text.mid(c.start, end - c.start);
        QJsonObject fields = fieldsForFinding(QString(), text);
        const auto dates = findDates(text);
        if (!dates.isEmpty()) {
            QJsonArray list;
            for (const auto& d : dates)
                list.append(d.value.toString(Qt::ISODate));
            fields["dates"] = list;
        }
        const auto laws = findGoverningLaw(text);
        if (!laws.isEmpty() && text.contains("govern", Qt::CaseInsensitive))
            fields["law"] = laws.front().value;
        if (fields.isEmpty())
            continue;
        Finding f;
        f.category = QStringLiteral("Fields");
        f.start = c.start;
        f.end = end;
        f.page = c.page ? c.page : document.pageAt(c.start);
        f.clauseIndex = c.index;
        f.text = text;
        f.fields = fields;
        // No confidence: the values are read by rules, which have no calibration.
        f.source = QStringLiteral("fast");
        f.rationale = QStringLiteral("values read from the clause text");
        out.append(f);
    }
    return out;
}

std::vector<std::unique_ptr<ClauseHead>> makeBuiltInHeads()
{
    std::vector<std::unique_ptr<ClauseHead>> heads;
    heads.push_back(std::make_unique<CuadClassifierHead>());
    heads.push_back(std::make_unique<FieldExtractorHead>());
    return heads;
}

} // namespace cw::heads
