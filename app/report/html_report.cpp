// The HTML report: one self-contained file (inline CSS, no scripts, no external resources).
// Every piece of text from the document, the model or the user is escaped.
#include "app/report/report_exporter.h"
#include "app/report/report_text.h"
#include "app/review/model_run.h"

namespace cw {
namespace {

QString esc(const QString& text)
{
    return text.toHtmlEscaped(); // & < > "
}

QString riskBadge(Risk risk)
{
    return QStringLiteral("<span class=\"risk risk-%1\">%2</span>")
        .arg(riskName(risk), report::riskLabel(risk));
}

const char* const kStyle = R"(
body { font-family: "Noto Sans", "Noto Sans CJK SC", "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 60em; color: #1d1d1f; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { margin-bottom: 0.3em; }
table { border-collapse: collapse; width: 100%; margin: 0.6em 0; }
th, td { border: 1px solid #d0d0d0; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.1em 1em; }
dl.meta dt { font-weight: bold; }
dl.meta dd { margin: 0; word-break: break-all; }
.risk { display: inline-block; padding: 0 0.5em; border-radius: 0.6em; font-size: 0.9em; }
.risk-high { background: #f8d0cc; color: #8a1c10; }
.risk-medium { background: #fde8b8; color: #7a5200; }
.risk-low { background: #d4eed6; color: #1e5e25; }
.risk-none { background: #eaeaea; color: #444; }
.finding { border-left: 0.35em solid #eaeaea; padding: 0.3em 0.8em; margin: 0.6em 0; }
.finding.high { border-color: #d9534f; } .finding.medium { border-color: #f0ad4e; }
.finding.low { border-color: #5cb85c; }
blockquote { margin: 0.3em 0; padding-left: 0.8em; color: #333; border-left: 2px solid #ddd; }
.note { color: #555; font-size: 0.92em; }
.edited { color: #5a3f9e; font-size: 0.92em; }
.unread { background: #fde8b8; color: #5a3d00; padding: 0.5em 0.8em; border-radius: 0.3em; }
@media (prefers-color-scheme: dark) {
  body { background: #1e1e1e; color: #e6e6e6; } th { background: #2b2b2b; }
  th, td { border-color: #444; } blockquote { color: #ccc; } .note { color: #aaa; }
}
)";

} // namespace

QByteArray reviewToHtml(const Review& review)
{
    const ReviewSummary summary = report::effectiveSummary(review);
    const QString title
        = review.document.title.isEmpty() ? review.document.path : review.document.title;
    QString h;
    h += QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                        "<meta name=\"generator\" content=\"Clausewright\">\n");
    h += QStringLiteral("<title>Contract review: %1</title>\n<style>%2</style>\n</head>\n<body>\n")
             .arg(esc(title), QString::fromLatin1(kStyle));
    h += QStringLiteral("<h1>Contract review: %1</h1>\n").arg(esc(title));
    if (const QString unread = report::unreadPagesNote(review.document); !unread.isEmpty())
        h += QStringLiteral("<p class=\"unread\"><strong>Not read:</strong> %1</p>\n")
                 .arg(esc(unread));
    h += QStringLiteral("<dl class=\"meta\">\n");
    const auto meta = [&h](const QString& key, const QString& value) {
        h += QStringLiteral("<dt>%1</dt><dd>%2</dd>\n").arg(key, esc(value));
    };
    meta(QStringLiteral("Document"), review.document.path);
    meta(QStringLiteral("Format"),
        QStringLiteral("%1, %2").arg(report::documentFormatName(review.document.format),
            report::pageCountText(review.document)));
    meta(QStringLiteral("SHA-256"), review.document.sha256);
    meta(QStringLiteral("Model"), report::modelLine(review));
    if (!review.playbookName.isEmpty())
        meta(QStringLiteral("Playbook"), review.playbookName);
    meta(QStringLiteral("Reviewed"), review.createdAt.toUTC().toString(Qt::ISODate));
    meta(QStringLiteral("Report generated"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    h += QStringLiteral("</dl>\n<h2>Summary</h2>\n");
    if (!summary.text.isEmpty())
        h += QStringLiteral("<p>%1</p>\n").arg(esc(summary.text));
    h += QStringLiteral("<table class=\"summary\"><tr><th>Risk</th><th>Findings</th></tr>\n");
    h += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>\n")
             .arg(riskBadge(Risk::High))
             .arg(summary.high);
    h += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>\n")
             .arg(riskBadge(Risk::Medium))
             .arg(summary.medium);
    h += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>\n</table>\n")
             .arg(riskBadge(Risk::Low))
             .arg(summary.low);
    if (!summary.missingCategories.isEmpty()) {
        QStringList missing;
        for (const QString& category : summary.missingCategories)
            missing.append(esc(category));
        h += QStringLiteral("<p><strong>Missing clauses:</strong> %1</p>\n")
                 .arg(missing.join(QStringLiteral(", ")));
    }

    h += QStringLiteral("<h2>Findings by clause</h2>\n");
    for (const auto& [clauseIndex, findings] : report::findingsByClause(review)) {
        if (clauseIndex >= 0) {
            const Clause& clause = review.clauses[clauseIndex];
            h += QStringLiteral("<h3>%1 <span class=\"note\">(page %2)</span></h3>\n")
                     .arg(esc(report::clauseTitle(clause)), report::pageText(clause.page));
        } else {
            h += QStringLiteral("<h3>Outside any clause</h3>\n");
        }
        for (const int i : findings) {
            const Finding& f = review.findings[i];
            h += QStringLiteral("<div class=\"finding %1\">\n<strong>%2</strong> %3 "
                                "<span class=\"note\">page %4%5 · %6%7</span>\n")
                     .arg(riskName(f.risk), esc(f.category), riskBadge(f.risk),
                         report::pageText(f.page))
                     .arg(f.confidence ? QStringLiteral(" · ") + report::confidenceText(f)
                                       : QString())
                     .arg(esc(f.source),
                         f.needsHumanReview ? QStringLiteral(" · needs human review") : QString());
            h += QStringLiteral("<blockquote>%1</blockquote>\n").arg(esc(f.text));
            if (!f.fields.isEmpty())
                h += QStringLiteral("<div class=\"note\">Fields: %1</div>\n")
                         .arg(esc(report::fieldsLine(f)));
            if (!f.rationale.isEmpty())
                h += QStringLiteral("<div>%1%2</div>\n")
                         .arg(esc(f.rationale),
                             f.ruleId.isEmpty()
                                 ? QString()
                                 : QStringLiteral(" <span class=\"note\">(rule %1)</span>")
                                       .arg(esc(f.ruleId)));
            if (f.userEdited)
                h += QStringLiteral("<div class=\"edited\">Edited by the reviewer (was %1, risk "
                                    "%2)%3</div>\n")
                         .arg(esc(f.originalCategory), riskName(f.originalRisk),
                             f.userComment.isEmpty() ? QString()
                                                     : QStringLiteral(": ") + esc(f.userComment));
            h += QStringLiteral("</div>\n");
        }
    }
    if (const auto run = modelRunOf(review))
        h += QStringLiteral("<footer class=\"note\">Model review on %1</footer>\n")
                 .arg(esc(modelRunText(*run)));
    h += QStringLiteral("</body>\n</html>\n");
    return h.toUtf8();
}

} // namespace cw
