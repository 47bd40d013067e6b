#include "app/heads/document_findings.h"

#include "app/heads/field_extractors.h"

namespace cw::heads {

const QSet<QString>& documentLevelCategories()
{
    static const QSet<QString> set
        = { "Document Name", "Parties", "Agreement Date", "Effective Date" };
    return set;
}

const QSet<QString>& ruleDecidedCategories()
{
    static const QSet<QString> set = { "Document Name", "Parties" };
    return set;
}

std::optional<qsizetype> ruleDateStart(const QString& category, const QString& text)
{
    std::optional<Located<QDate>> date;
    if (category == QLatin1String("Agreement Date"))
        date = findAgreementDate(text);
    else if (category == QLatin1String("Effective Date"))
        date = findStatedEffectiveDate(text); // the fallback is the agreement date's evidence
    if (!date)
        return std::nullopt;
    return date->start;
}

namespace {

Finding makeFinding(const QString& text, const QString& category, qsizetype start, qsizetype end,
    double score, const QString& rationale)
{
    // Rules have no calibration, so the finding carries a rank, not a confidence.
    Finding f;
    f.category = category;
    f.start = start;
    f.end = end;
    f.text = text.mid(start, end - start);
    f.score = score;
    f.source = QStringLiteral("fast");
    f.rationale = rationale;
    return f;
}

} // namespace

QList<Finding> documentLevelFindings(const QString& text)
{
    QList<Finding> out;
    if (const auto title = findDocumentName(text)) {
        Finding f = makeFinding(text, "Document Name", title->start, title->end, 0.8,
            "title at the top of the contract");
        f.fields["name"] = title->value;
        out.append(f);
    }
    // One finding per party: its name through its defined name when the definition follows
    // the name in the opening ("Acme Inc., a Delaware corporation (\"Acme\")"), so the party
    // is one highlight with both names as fields; two findings when they lie apart.
    constexpr qsizetype kDefinitionReach = 300;
    for (const Party& p : findParties(text)) {
        const bool together = p.definedName && p.definedName->start >= p.name.end
            && p.definedName->start - p.name.end <= kDefinitionReach;
        qsizetype end = together ? p.definedName->end : p.name.end;
        // Take in the closing quote and parenthesis of the definition.
        while (together && end < text.size() && end - p.definedName->end < 2
            && QStringLiteral("\"\u201D')").contains(text.at(end)))
            ++end;
        Finding f = makeFinding(text, "Parties", p.name.start, end, 0.7,
            together ? "party named in the opening, with its defined name"
                     : "party named in the opening");
        f.fields["name"] = p.name.value;
        if (p.definedName)
            f.fields["defined_name"] = p.definedName->value;
        out.append(f);
        if (p.definedName && !together) {
            Finding d = makeFinding(text, "Parties", p.definedName->start, p.definedName->end, 0.7,
                "defined name of a party");
            d.fields["name"] = p.name.value;
            d.fields["defined_name"] = p.definedName->value;
            out.append(d);
        }
    }
    const auto agreement = findAgreementDate(text);
    if (agreement) {
        Finding f = makeFinding(
            text, "Agreement Date", agreement->start, agreement->end, 0.7, "date in the opening");
        f.fields["date"] = agreement->value.toString(Qt::ISODate);
        out.append(f);
    }
    if (const auto effective = findEffectiveDate(text)) {
        Finding f = makeFinding(text, "Effective Date", effective->start, effective->end, 0.6,
            agreement && agreement->start == effective->start
                ? "no separate effective date: the agreement date"
                : "date the contract takes effect");
        f.fields["date"] = effective->value.toString(Qt::ISODate);
        out.append(f);
    }
    return out;
}

void addFindingFields(QList<Finding>& findings)
{
    for (Finding& f : findings) {
        const QJsonObject more = fieldsForFinding(f.category, f.text);
        for (auto it = more.begin(); it != more.end(); ++it) {
            if (!f.fields.contains(it.key()))
                f.fields.insert(it.key(), it.value());
        }
    }
}

} // namespace cw::heads
