// The JSON report: the full review, offsets in Unicode code points. The shape is documented
// in resources/schemas/review.schema.json; keep the two in step.
#include "app/report/report_exporter.h"
#include "app/report/report_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace cw {
namespace {

constexpr auto kSchemaId = "https://clausewright.local/schemas/review.schema.json";
constexpr int kSchemaVersion = 1;

// Code-point offsets for a sorted walk would be faster; reviews have a few hundred offsets
// at most, and Document::codePointOffset is linear, so cache the conversion per offset.
class OffsetConverter {
public:
    explicit OffsetConverter(const Document& document)
        : m_text(document.text)
    {
        // prefix[i] = code points before UTF-16 index i; one pass over the text.
        m_prefix.resize(m_text.size() + 1);
        qsizetype points = 0;
        for (qsizetype i = 0; i < m_text.size(); ++i) {
            m_prefix[i] = points;
            if (!(m_text.at(i).isLowSurrogate() && i > 0 && m_text.at(i - 1).isHighSurrogate()))
                ++points;
        }
        m_prefix[m_text.size()] = points;
    }
    qint64 toCodePoints(qsizetype utf16) const
    {
        if (utf16 <= 0)
            return 0;
        if (utf16 >= m_text.size())
            return m_prefix.back() + (utf16 - m_text.size());
        return m_prefix[utf16];
    }

private:
    const QString& m_text;
    QList<qsizetype> m_prefix;
};

qsizetype utf16FromCodePoints(const QString& text, qint64 points)
{
    qsizetype i = 0;
    for (qint64 seen = 0; seen < points && i < text.size(); ++seen) {
        const bool pair = text.at(i).isHighSurrogate() && i + 1 < text.size()
            && text.at(i + 1).isLowSurrogate();
        i += pair ? 2 : 1;
    }
    return i;
}

QJsonObject documentJson(const Document& document)
{
    QJsonArray pages;
    for (const PageInfo& page : document.pages) {
        pages.append(QJsonObject { { "number", page.number }, { "width_pt", page.sizePt.width() },
            { "height_pt", page.sizePt.height() }, { "has_text_layer", page.hasTextLayer } });
    }
    return QJsonObject { { "path", document.path }, { "sha256", document.sha256 },
        { "title", document.title }, { "format", report::documentFormatName(document.format) },
        { "pages", document.pageCount() }, { "page_sizes", pages },
        { "warnings", QJsonArray::fromStringList(document.warnings) }, { "text", document.text } };
}

QJsonObject clauseJson(const Clause& clause, const OffsetConverter& offsets)
{
    return QJsonObject { { "index", clause.index }, { "parent", clause.parent },
        { "level", clause.level }, { "kind", report::clauseKindName(clause.kind) },
        { "number", clause.number }, { "heading", clause.heading },
        { "start", offsets.toCodePoints(clause.start) },
        { "end", offsets.toCodePoints(clause.end) },
        { "own_end", offsets.toCodePoints(std::max(clause.ownEnd, clause.start)) },
        { "page", clause.page } };
}

QJsonObject findingJson(const Finding& finding, const OffsetConverter& offsets)
{
    QJsonValue edit = QJsonValue::Null;
    if (finding.userEdited) {
        edit = QJsonObject { { "original_category", finding.originalCategory },
            { "original_risk", riskName(finding.originalRisk) },
            { "comment", finding.userComment } };
    }
    return QJsonObject { { "category", finding.category }, { "clause_index", finding.clauseIndex },
        { "start", offsets.toCodePoints(finding.start) },
        { "end", offsets.toCodePoints(finding.end) }, { "page", finding.page },
        { "text", finding.text }, { "fields", finding.fields },
        { "confidence", finding.confidence ? QJsonValue(*finding.confidence) : QJsonValue() },
        { "risk", riskName(finding.risk) }, { "rule", finding.ruleId },
        { "rationale", finding.rationale },
        { "suggested_text",
            finding.suggestedText.isEmpty() ? QJsonValue() : QJsonValue(finding.suggestedText) },
        { "source", finding.source }, { "needs_human_review", finding.needsHumanReview },
        { "user_edit", edit } };
}

} // namespace

QByteArray reviewToJson(const Review& review)
{
    const OffsetConverter offsets(review.document);
    QJsonArray clauses;
    for (const Clause& clause : review.clauses)
        clauses.append(clauseJson(clause, offsets));
    QJsonArray findings;
    for (const Finding& finding : review.findings)
        findings.append(findingJson(finding, offsets));
    QJsonObject timings;
    for (auto it = review.timingsMs.begin(); it != review.timingsMs.end(); ++it)
        timings.insert(it.key(), it.value());
    const ReviewSummary summary = report::effectiveSummary(review);
    QJsonArray unreadPages;
    for (const int page : report::unreadPages(review.document))
        unreadPages.append(page);
    const QJsonObject root { { "$schema", kSchemaId }, { "schema_version", kSchemaVersion },
        { "generator", "Clausewright" }, { "id", review.id },
        { "created_at",
            review.createdAt.isValid() ? review.createdAt.toUTC().toString(Qt::ISODateWithMs)
                                       : QString() },
        { "document", documentJson(review.document) }, { "model", review.modelName },
        { "playbook", review.playbookName }, { "settings", review.settings },
        { "timings_ms", timings },
        { "summary",
            QJsonObject { { "high", summary.high }, { "medium", summary.medium },
                { "low", summary.low },
                { "missing_categories", QJsonArray::fromStringList(summary.missingCategories) },
                { "text", summary.text }, { "unread_pages", unreadPages },
                { "unread_note", report::unreadPagesNote(review.document) } } },
        { "clauses", clauses }, { "findings", findings } };
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

Result<Review> reviewFromJson(const QByteArray& json)
{
    QJsonParseError parseError;
    const QJsonDocument parsed = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !parsed.isObject()) {
        return makeError("review JSON: " + parseError.errorString().toStdString() + " at offset "
            + std::to_string(parseError.offset));
    }
    const QJsonObject root = parsed.object();
    for (const char* key : { "document", "summary", "settings", "timings_ms" }) {
        if (!root.value(QLatin1String(key)).isObject())
            return makeError(std::string("review JSON: '") + key + "' is missing or not an object");
    }
    for (const char* key : { "clauses", "findings" }) {
        if (!root.value(QLatin1String(key)).isArray())
            return makeError(std::string("review JSON: '") + key + "' is missing or not an array");
    }
    Review review;
    review.id = root.value("id").toInteger();
    review.createdAt
        = QDateTime::fromString(root.value("created_at").toString(), Qt::ISODateWithMs);
    review.modelName = root.value("model").toString();
    review.playbookName = root.value("playbook").toString();
    review.settings = root.value("settings").toObject();
    const QJsonObject timings = root.value("timings_ms").toObject();
    for (auto it = timings.begin(); it != timings.end(); ++it)
        review.timingsMs.insert(it.key(), it.value().toInteger());

    const QJsonObject doc = root.value("document").toObject();
    Document& document = review.document;
    document.path = doc.value("path").toString();
    document.sha256 = doc.value("sha256").toString();
    document.title = doc.value("title").toString();
    document.text = doc.value("text").toString();
    const QString format = doc.value("format").toString();
    document.format = format == QLatin1String("pdf") ? DocumentFormat::Pdf
        : format == QLatin1String("docx")            ? DocumentFormat::Docx
                                                     : DocumentFormat::PlainText;
    for (const QJsonValue& value : doc.value("page_sizes").toArray()) {
        const QJsonObject page = value.toObject();
        document.pages.append(PageInfo { page.value("number").toInt(),
            QSizeF(page.value("width_pt").toDouble(), page.value("height_pt").toDouble()),
            page.value("has_text_layer").toBool(true) });
    }
    for (const QJsonValue& value : doc.value("warnings").toArray())
        document.warnings.append(value.toString());

    const auto offset = [&](const QJsonObject& object, const char* key) {
        return utf16FromCodePoints(document.text, object.value(QLatin1String(key)).toInteger());
    };
    static const QStringList kinds { "preamble", "numbered", "heading", "definition",
        "attachment" };
    for (const QJsonValue& value : root.value("clauses").toArray()) {
        const QJsonObject object = value.toObject();
        Clause clause;
        clause.index = object.value("index").toInt();
        clause.parent = object.value("parent").toInt(-1);
        clause.level = object.value("level").toInt();
        clause.kind = ClauseKind(std::max<qsizetype>(
            0, kinds.indexOf(object.value("kind").toString(QStringLiteral("numbered")))));
        clause.number = object.value("number").toString();
        clause.heading = object.value("heading").toString();
        clause.start = offset(object, "start");
        clause.end = offset(object, "end");
        clause.ownEnd = offset(object, "own_end");
        clause.page = object.value("page").toInt();
        review.clauses.append(clause);
    }
    for (const QJsonValue& value : root.value("findings").toArray()) {
        const QJsonObject object = value.toObject();
        Finding finding;
        finding.category = object.value("category").toString();
        finding.clauseIndex = object.value("clause_index").toInt(-1);
        finding.start = offset(object, "start");
        finding.end = offset(object, "end");
        finding.page = object.value("page").toInt();
        finding.text = object.value("text").toString();
        finding.fields = object.value("fields").toObject();
        if (const QJsonValue confidence = object.value("confidence"); confidence.isDouble())
            finding.confidence = confidence.toDouble();
        finding.risk = riskFromName(object.value("risk").toString());
        finding.ruleId = object.value("rule").toString();
        finding.rationale = object.value("rationale").toString();
        finding.suggestedText = object.value("suggested_text").toString();
        finding.source = object.value("source").toString();
        finding.needsHumanReview = object.value("needs_human_review").toBool();
        const QJsonObject edit = object.value("user_edit").toObject();
        finding.userEdited = !edit.isEmpty();
        finding.originalCategory = edit.value("original_category").toString();
        finding.originalRisk = riskFromName(edit.value("original_risk").toString());
        finding.userComment = edit.value("comment").toString();
        review.findings.append(finding);
    }
    const QJsonObject summary = root.value("summary").toObject();
    review.summary.high = summary.value("high").toInt();
    review.summary.medium = summary.value("medium").toInt();
    review.summary.low = summary.value("low").toInt();
    for (const QJsonValue& value : summary.value("missing_categories").toArray())
        review.summary.missingCategories.append(value.toString());
    review.summary.text = summary.value("text").toString();
    return review;
}

} // namespace cw
