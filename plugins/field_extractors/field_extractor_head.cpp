#include "plugins/field_extractors/field_extractor_head.h"

#include "app/heads/field_extractors.h"

#include <QJsonArray>

namespace cw::heads {

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
        f.category = QString::fromLatin1(kCategory);
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

} // namespace cw::heads
