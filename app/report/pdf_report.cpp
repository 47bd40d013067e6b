// The PDF report: QTextDocument laid out on A4 pages of a QPdfWriter, painted page by page
// with a footer (title, generation date, model, page n of m; where the model review ran, its
// tokens/s and time). The fonts list a CJK family so
// Chinese and Japanese contract text has glyphs (Noto Sans CJK, fonts-noto-cjk).
#include "app/report/report_exporter.h"
#include "app/report/report_text.h"
#include "app/review/model_run.h"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QGuiApplication>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>

namespace cw {
namespace {

constexpr int kResolution = 300; // device pixels per inch for layout; text stays vector

QString esc(const QString& text)
{
    return text.toHtmlEscaped();
}

QString riskCell(Risk risk)
{
    return QStringLiteral("<td bgcolor=\"%1\"><b>%2</b></td>")
        .arg(report::riskColour(risk).name(), report::riskLabel(risk));
}

QString shortened(const QString& text, int length)
{
    const QString simple = text.simplified();
    return simple.size() <= length ? simple : simple.left(length - 1) + QChar(0x2026);
}

QString pdfHtml(const Review& review, const QString& generated)
{
    const ReviewSummary summary = report::effectiveSummary(review);
    const QString title
        = review.document.title.isEmpty() ? review.document.path : review.document.title;
    QString h = QStringLiteral("<html><body>");
    h += QStringLiteral("<h1>Contract review: %1</h1>").arg(esc(title));
    if (const QString unread = report::unreadPagesNote(review.document); !unread.isEmpty())
        h += QStringLiteral("<p style=\"background-color:#fde8b8\"><b>Not read:</b> %1</p>")
                 .arg(esc(unread));
    h += QStringLiteral("<table cellpadding=\"2\" cellspacing=\"0\">");
    const auto meta = [&h](const QString& key, const QString& value) {
        h += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(key, esc(value));
    };
    meta(QStringLiteral("Document"), review.document.path);
    meta(QStringLiteral("Pages"), report::pageCountText(review.document));
    meta(QStringLiteral("SHA-256"), review.document.sha256);
    meta(QStringLiteral("Model"), report::modelLine(review));
    if (!review.playbookName.isEmpty())
        meta(QStringLiteral("Playbook"), review.playbookName);
    meta(QStringLiteral("Reviewed"), review.createdAt.toUTC().toString(Qt::ISODate));
    meta(QStringLiteral("Report generated"), generated);
    h += QStringLiteral("</table>");

    h += QStringLiteral("<h2>Summary</h2>");
    if (!summary.text.isEmpty())
        h += QStringLiteral("<p>%1</p>").arg(esc(summary.text));
    h += QStringLiteral("<table border=\"1\" cellpadding=\"4\" cellspacing=\"0\" width=\"40%\">"
                        "<tr><th align=\"left\">Risk</th><th align=\"right\">Findings</th></tr>");
    const std::pair<Risk, int> rows[] = { { Risk::High, summary.high },
        { Risk::Medium, summary.medium }, { Risk::Low, summary.low } };
    for (const auto& [risk, count] : rows)
        h += QStringLiteral("<tr>%1<td align=\"right\">%2</td></tr>")
                 .arg(riskCell(risk))
                 .arg(count);
    h += QStringLiteral("<tr><td>Total</td><td align=\"right\">%1</td></tr></table>")
             .arg(review.findings.size());
    if (!summary.missingCategories.isEmpty()) {
        QStringList missing;
        for (const QString& category : summary.missingCategories)
            missing.append(esc(category));
        h += QStringLiteral("<p><b>Missing clauses:</b> %1</p>")
                 .arg(missing.join(QStringLiteral(", ")));
    }

    h += QStringLiteral("<h2>Findings</h2><table border=\"1\" cellpadding=\"3\" cellspacing=\"0\" "
                        "width=\"100%\"><tr><th>#</th><th>Category</th><th>Risk</th><th>Page</th>"
                        "<th>Clause</th><th>Text</th></tr>");
    for (int i = 0; i < review.findings.size(); ++i) {
        const Finding& f = review.findings[i];
        const QString clause = f.clauseIndex >= 0 && f.clauseIndex < review.clauses.size()
            ? report::clauseTitle(review.clauses[f.clauseIndex])
            : QString();
        h += QStringLiteral("<tr><td>%1</td><td>%2</td>%3<td align=\"right\">%4</td>"
                            "<td>%5</td><td>%6</td></tr>")
                 .arg(i + 1)
                 .arg(esc(f.category), riskCell(f.risk),
                     f.page > 0 ? QStringLiteral("p. %1").arg(f.page) : report::pageText(f.page),
                     esc(clause), esc(shortened(f.text, 90)));
    }
    h += QStringLiteral("</table>");

    h += QStringLiteral("<h2>Clause by clause</h2>");
    for (const auto& [clauseIndex, findings] : report::findingsByClause(review)) {
        if (clauseIndex >= 0) {
            const Clause& clause = review.clauses[clauseIndex];
            h += QStringLiteral("<h3>%1 (page %2)</h3>")
                     .arg(esc(report::clauseTitle(clause)), report::pageText(clause.page));
        } else {
            h += QStringLiteral("<h3>Outside any clause</h3>");
        }
        for (const int i : findings) {
            const Finding& f = review.findings[i];
            h += QStringLiteral("<table border=\"1\" cellpadding=\"4\" cellspacing=\"0\" "
                                "width=\"100%\"><tr><td width=\"45%\"><b>%1</b></td>%2"
                                "<td>page %3</td><td>%4</td></tr>")
                     .arg(esc(f.category), riskCell(f.risk), report::pageText(f.page))
                     .arg(report::confidenceText(f)
                         + (!f.needsHumanReview ? QString()
                                 : f.confidence ? QStringLiteral(", needs human review")
                                                : QStringLiteral("needs human review")));
            h += QStringLiteral("<tr><td colspan=\"4\"><i>%1</i></td></tr>").arg(esc(f.text));
            if (!f.fields.isEmpty())
                h += QStringLiteral("<tr><td colspan=\"4\">Fields: %1</td></tr>")
                         .arg(esc(report::fieldsLine(f)));
            if (!f.rationale.isEmpty())
                h += QStringLiteral("<tr><td colspan=\"4\">%1%2</td></tr>")
                         .arg(esc(f.rationale),
                             f.ruleId.isEmpty() ? QString()
                                                : QStringLiteral(" (rule %1)").arg(esc(f.ruleId)));
            if (f.userEdited)
                h += QStringLiteral("<tr><td colspan=\"4\">Edited by the reviewer (was %1, risk "
                                    "%2)%3</td></tr>")
                         .arg(esc(f.originalCategory), riskName(f.originalRisk),
                             f.userComment.isEmpty() ? QString()
                                                     : QStringLiteral(": ") + esc(f.userComment));
            h += QStringLiteral("</table><p></p>");
        }
    }
    h += QStringLiteral("</body></html>");
    return h;
}

} // namespace

Result<QByteArray> reviewToPdf(const Review& review)
{
    if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        return makeError("PDF report: needs a QGuiApplication for fonts (run with "
                         "QT_QPA_PLATFORM=offscreen when headless)");
    const QString generated = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    const QString title
        = review.document.title.isEmpty() ? review.document.path : review.document.title;

    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setResolution(kResolution);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(16, 16, 16, 14), QPageLayout::Millimeter);
    writer.setTitle(QStringLiteral("Contract review: ") + title);
    writer.setCreator(QStringLiteral("Clausewright"));

    QFont font;
    font.setFamilies({ QStringLiteral("Noto Sans"), QStringLiteral("DejaVu Sans"),
        QStringLiteral("Noto Sans CJK SC"), QStringLiteral("Noto Sans CJK JP") });
    font.setPointSizeF(9.0);
    QTextDocument document;
    document.documentLayout()->setPaintDevice(&writer);
    document.setDefaultFont(font);
    document.setHtml(pdfHtml(review, generated));

    const QRectF content = writer.pageLayout().paintRectPixels(kResolution);
    QFont footerFont = font;
    footerFont.setPointSizeF(7.5);
    const QFontMetricsF footerMetrics(footerFont, &writer);
    // A second footer line, above the first: where the model review ran and how fast (none
    // for the fast heads only).
    const auto run = modelRunOf(review);
    const QString footerRun
        = run ? QStringLiteral("model review on ") + modelRunText(*run) : QString();
    const double footerHeight = footerMetrics.height() * (footerRun.isEmpty() ? 2.0 : 3.0);
    const double bodyHeight = content.height() - footerHeight;
    document.setPageSize(QSizeF(content.width(), bodyHeight));
    const int pages = document.pageCount();

    QPainter painter;
    if (!painter.begin(&writer))
        return makeError("PDF report: cannot start the PDF writer");
    const QString footerLeft = QStringLiteral("Clausewright · %1 · generated %2 · model %3")
                                   .arg(shortened(title, 60), generated, report::modelLine(review));

    for (int page = 0; page < pages; ++page) {
        if (page > 0 && !writer.newPage())
            return makeError("PDF report: cannot add page " + std::to_string(page + 1));
        painter.save();
        painter.translate(0, -page * bodyHeight);
        QAbstractTextDocumentLayout::PaintContext context;
        context.clip = QRectF(0, page * bodyHeight, content.width(), bodyHeight);
        context.palette.setColor(QPalette::Text, Qt::black);
        painter.setClipRect(context.clip);
        document.documentLayout()->draw(&painter, context);
        painter.restore();
        painter.setFont(footerFont);
        painter.setPen(QColor(0x55, 0x55, 0x55));
        const QRectF footer(
            0, content.height() - footerMetrics.height(), content.width(), footerMetrics.height());
        painter.drawText(footer, Qt::AlignLeft | Qt::AlignVCenter,
            footerMetrics.elidedText(footerLeft, Qt::ElideRight, content.width() * 0.8));
        painter.drawText(footer, Qt::AlignRight | Qt::AlignVCenter,
            QStringLiteral("page %1 of %2").arg(page + 1).arg(pages));
        if (!footerRun.isEmpty())
            painter.drawText(footer.translated(0, -footerMetrics.height()),
                Qt::AlignLeft | Qt::AlignVCenter,
                footerMetrics.elidedText(footerRun, Qt::ElideRight, content.width()));
    }
    if (!painter.end())
        return makeError("PDF report: the PDF writer failed to finish");
    buffer.close();
    if (bytes.isEmpty())
        return makeError("PDF report: the PDF writer produced no output");
    return bytes;
}

} // namespace cw
