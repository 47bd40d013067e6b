#include "app/report/report_exporter.h"
#include "tests/app/report/json_schema_check.h"
#include "tests/app/report/sample_review.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>

using namespace cw;

namespace {

QString runTool(const QString& program, const QStringList& arguments, bool* ok)
{
    QProcess process;
    process.start(program, arguments);
    *ok = process.waitForFinished(60000) && process.exitStatus() == QProcess::NormalExit
        && process.exitCode() == 0;
    return QString::fromUtf8(process.readAllStandardOutput());
}

// RFC 4180 reader for the test: rows of fields.
QList<QStringList> parseCsv(const QString& csv)
{
    QList<QStringList> rows;
    QStringList row;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < csv.size(); ++i) {
        const QChar c = csv[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < csv.size() && csv[i + 1] == QLatin1Char('"')) {
                field += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            row.append(field);
            field.clear();
        } else if (c == QLatin1Char('\r') && i + 1 < csv.size()
            && csv[i + 1] == QLatin1Char('\n')) {
            row.append(field);
            rows.append(row);
            row.clear();
            field.clear();
            ++i;
        } else {
            field += c;
        }
    }
    return rows;
}

} // namespace

class ReportExporterTest : public QObject {
    Q_OBJECT
private slots:
    void namesFormats();
    void jsonFollowsTheSchema();
    void jsonOffsetsAreCodePoints();
    void jsonRoundTrips();
    void markdownHasSummaryTableAndClauses();
    void htmlIsSelfContainedAndEscaped();
    void csvQuotesPerRfc4180();
    void pdfHasTextCjkAndRiskColours();
    void findingWithoutCalibrationShowsNoConfidence();
    void summaryFollowsACorrection();
    void unreadPagesAreStatedAtTheTop();
    void documentWithoutPagesShowsNoPageZero();
    void setsPermissionsWithoutTouchingTheUmask();
    void refusesUnwritablePaths();
    void fullDiskLeavesNoFileAndKeepsTheOldOne();
};

void ReportExporterTest::namesFormats()
{
    QCOMPARE(reportFormatFromName("PDF"), ReportFormat::Pdf);
    QCOMPARE(reportFormatFromName("markdown"), ReportFormat::Markdown);
    QCOMPARE(reportFormatFromName("md"), ReportFormat::Markdown);
    QCOMPARE(reportFormatFromName(" html "), ReportFormat::Html);
    QCOMPARE(reportFormatFromName("csv"), ReportFormat::Csv);
    QCOMPARE(reportFormatFromName("json"), ReportFormat::Json);
    QVERIFY(!reportFormatFromName("docx").has_value());
    for (ReportFormat f : { ReportFormat::Json, ReportFormat::Markdown, ReportFormat::Html,
             ReportFormat::Pdf, ReportFormat::Csv })
        QCOMPARE(reportFormatFromName(reportFormatName(f)), f);
}

void ReportExporterTest::jsonFollowsTheSchema()
{
    QFile schemaFile(QStringLiteral(CW_SOURCE_DIR "/resources/schemas/review.schema.json"));
    QVERIFY(schemaFile.open(QIODevice::ReadOnly));
    const QJsonDocument schema = QJsonDocument::fromJson(schemaFile.readAll());
    QVERIFY(schema.isObject());
    const testing::JsonSchemaCheck checker(schema.object());

    const QJsonDocument json = QJsonDocument::fromJson(reviewToJson(testing::sampleReview()));
    QVERIFY(json.isObject());
    const QStringList problems = checker.check(json.object());
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));

    // The checker catches what it should: a missing key, a wrong type, a bad enum value.
    QJsonObject broken = json.object();
    broken.remove(QStringLiteral("summary"));
    QJsonArray findings = broken.value("findings").toArray();
    QJsonObject first = findings[0].toObject();
    first["risk"] = QStringLiteral("catastrophic");
    first["start"] = QStringLiteral("12");
    findings[0] = first;
    broken["findings"] = findings;
    const QStringList found = checker.check(broken);
    QVERIFY(found.join('\n').contains("missing required key summary"));
    QVERIFY(found.join('\n').contains("$.findings[0].risk: not one of the allowed values"));
    QVERIFY(found.join('\n').contains("$.findings[0].start: expected integer"));
}

void ReportExporterTest::jsonOffsetsAreCodePoints()
{
    const Review review = testing::sampleReview();
    const QJsonObject json = QJsonDocument::fromJson(reviewToJson(review)).object();
    const QJsonObject finding = json.value("findings").toArray()[0].toObject();
    // One character before the finding (the emoji) takes two UTF-16 units.
    QCOMPARE(finding.value("start").toInteger(), qint64(review.findings[0].start - 1));
    QCOMPARE(finding.value("end").toInteger(), qint64(review.findings[0].end - 1));
    const QString text = json.value("document").toObject().value("text").toString();
    const QList<uint> points = text.toUcs4();
    const auto* codePoints = reinterpret_cast<const char32_t*>(points.constData());
    const QString evidence = QString::fromUcs4(codePoints + finding.value("start").toInteger(),
        finding.value("end").toInteger() - finding.value("start").toInteger());
    QCOMPARE(evidence, review.findings[0].text);
    QCOMPARE(finding.value("user_edit").type(), QJsonValue::Null);
    const QJsonObject edited = json.value("findings").toArray()[1].toObject();
    QCOMPARE(edited.value("user_edit").toObject().value("original_category").toString(),
        QStringLiteral("Expiration Date"));
}

void ReportExporterTest::jsonRoundTrips()
{
    const Review review = testing::sampleReview();
    Result<Review> back = reviewFromJson(reviewToJson(review));
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    QCOMPARE(back->document.text, review.document.text);
    QCOMPARE(back->findings.size(), review.findings.size());
    for (int i = 0; i < review.findings.size(); ++i) {
        QCOMPARE(back->findings[i].start, review.findings[i].start);
        QCOMPARE(back->findings[i].end, review.findings[i].end);
        QCOMPARE(back->findings[i].risk, review.findings[i].risk);
        QCOMPARE(back->findings[i].fields, review.findings[i].fields);
        QCOMPARE(back->findings[i].userEdited, review.findings[i].userEdited);
        QCOMPARE(back->findings[i].suggestedText, review.findings[i].suggestedText);
    }
    QCOMPARE(back->clauses.size(), review.clauses.size());
    QCOMPARE(back->clauses[3].number, QStringLiteral("第三条"));
    QCOMPARE(back->clauses[3].start, review.clauses[3].start);
    QCOMPARE(back->createdAt, review.createdAt);
    QCOMPARE(back->timingsMs, review.timingsMs);
    QVERIFY(!reviewFromJson("{\"document\": 3}").ok());
    QVERIFY(!reviewFromJson("not json").ok());
}

void ReportExporterTest::markdownHasSummaryTableAndClauses()
{
    const QString md = QString::fromUtf8(reviewToMarkdown(testing::sampleReview()));
    QVERIFY(md.startsWith("# Contract review: Supply Agreement \\<Acme & Co\\>"));
    QVERIFY(md.contains("| High | 1 |"));
    QVERIFY(md.contains("### 1. Governing Law (page 1)"));
    QVERIFY(md.contains("### 第三条 适用法律 (page 2)"));
    QVERIFY(md.contains("Qwen3.6-35B-A3B Q4\\_K\\_M"));
    QVERIFY(md.contains("Edited by the reviewer (was Expiration Date, risk medium)"));
    QVERIFY(md.contains("### Outside any clause"));
    // A line break inside finding text never breaks a table row.
    for (const QString& line : md.split('\n')) {
        if (line.startsWith("| 2 |"))
            QVERIFY(line.endsWith(" |"));
    }
}

void ReportExporterTest::htmlIsSelfContainedAndEscaped()
{
    Review review = testing::sampleReview();
    review.findings[0].text = QStringLiteral("<script>alert('x')</script> & \"more\"");
    const QString html = QString::fromUtf8(reviewToHtml(review));
    QVERIFY(html.startsWith("<!DOCTYPE html>"));
    QVERIFY(!html.contains("<script"));
    QVERIFY(html.contains("&lt;script&gt;alert('x')&lt;/script&gt; &amp; &quot;more&quot;"));
    QVERIFY(html.contains("Supply Agreement &lt;Acme &amp; Co&gt;"));
    QVERIFY(html.contains("&lt;b&gt;not&lt;/b&gt;"));
    QVERIFY(!html.contains("src="));
    QVERIFY(!html.contains("<link"));
    QVERIFY(html.contains("<style>"));
    QVERIFY(html.contains("class=\"risk risk-high\""));
    QVERIFY(html.contains("本合同受中华人民共和国法律管辖"));
}

void ReportExporterTest::csvQuotesPerRfc4180()
{
    const Review review = testing::sampleReview();
    const QByteArray bytes = reviewFindingsToCsv(review);
    QVERIFY(bytes.endsWith("\r\n"));
    const QList<QStringList> rows = parseCsv(QString::fromUtf8(bytes));
    QCOMPARE(rows.size(), review.findings.size() + 1);
    const QStringList header = rows[0];
    for (const QStringList& row : rows)
        QCOMPARE(row.size(), header.size());
    const qsizetype text = header.indexOf("text");
    const qsizetype rationale = header.indexOf("rationale");
    const qsizetype start = header.indexOf("start");
    QCOMPARE(rows[2][text], review.findings[1].text); // comma, quotes and a line break
    QCOMPARE(rows[1][rationale], review.findings[0].rationale);
    QCOMPARE(rows[1][start].toLongLong(), qint64(review.findings[0].start - 1)); // code points
    QCOMPARE(rows[2][header.indexOf("original_category")], QStringLiteral("Expiration Date"));
    QCOMPARE(rows[3][header.indexOf("fields")], QStringLiteral("{\"law\":\"中华人民共和国\"}"));
}

void ReportExporterTest::pdfHasTextCjkAndRiskColours()
{
    if (QStandardPaths::findExecutable("pdftotext").isEmpty()
        || QStandardPaths::findExecutable("pdftoppm").isEmpty())
        QSKIP("poppler-utils (pdftotext, pdftoppm) not installed");
    const QString dir = QStringLiteral(CW_TEST_BINARY_DIR);
    const QString pdf = dir + "/exported-report.pdf";
    QFile::remove(pdf);
    Result<void> exported = exportReview(testing::sampleReview(), ReportFormat::Pdf, pdf);
    QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().message.c_str());
    QFile file(pdf);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.read(5) == "%PDF-");

    bool ok = false;
    QString text = runTool("pdftotext", { "-enc", "UTF-8", pdf, "-" }, &ok);
    QVERIFY(ok);
    // pdftotext breaks lines where the layout wrapped them, and maps some CJK glyphs back to
    // their Kangxi radical compatibility code points (U+2F08 for 人): NFKC undoes that.
    text = text.normalized(QString::NormalizationForm_KC).simplified();
    const QString cjk = QString(text).remove(' ');
    for (const char* expected :
        { "Contract review: Supply Agreement <Acme & Co>", "Summary", "Governing Law",
            "Renewal Term", "Qwen3.6-35B-A3B Q4_K_M", "page 1 of", "Missing clauses",
            "Limitation of Liability", "needs human review", "Edited by the reviewer" })
        QVERIFY2(text.contains(QString::fromUtf8(expected)), expected);
    QVERIFY2(cjk.contains(QStringLiteral("第三条")), "CJK clause number missing");
    // (人 and 民 come back as radicals U+2F08/U+2EA0 from Qt's ToUnicode map; see the report.)
    QVERIFY2(cjk.contains(QStringLiteral("本合同受中华")), "CJK text missing");
    QVERIFY2(cjk.contains(QStringLiteral("共和国法律管辖")), "CJK text missing");
    QVERIFY2(cjk.contains(QStringLiteral("适用法律")), "CJK heading missing");

    const QString prefix = dir + "/exported-report-page";
    QFile::remove(prefix + "-1.png");
    runTool("pdftoppm", { "-png", "-r", "50", "-f", "1", "-l", "1", pdf, prefix }, &ok);
    QVERIFY(ok);
    const QImage page(prefix + "-1.png");
    QVERIFY(!page.isNull());
    QVERIFY(page.height() > page.width()); // A4 portrait
    // The summary table's high-risk cell is painted in the risk colour.
    bool red = false;
    int dark = 0;
    for (int y = 0; y < page.height(); ++y) {
        for (int x = 0; x < page.width(); ++x) {
            const QColor c = page.pixelColor(x, y);
            red = red
                || (qAbs(c.red() - 0xf8) < 8 && qAbs(c.green() - 0xd0) < 8
                    && qAbs(c.blue() - 0xcc) < 8);
            dark += c.lightness() < 100;
        }
    }
    QVERIFY(red);
    QVERIFY(dark > 500); // text was drawn
}

void ReportExporterTest::findingWithoutCalibrationShowsNoConfidence()
{
    // The sample's Parties finding has no calibrated confidence: no report makes one up.
    const Review review = testing::sampleReview();
    QVERIFY(!review.findings[3].confidence.has_value());
    const QJsonObject json = QJsonDocument::fromJson(reviewToJson(review)).object();
    const QJsonArray findings = json.value("findings").toArray();
    QVERIFY(findings[3].toObject().value("confidence").isNull());
    QCOMPARE(findings[0].toObject().value("confidence").toDouble(), 0.97);
    Result<Review> back = reviewFromJson(reviewToJson(review));
    QVERIFY(back.ok());
    QVERIFY(!back->findings[3].confidence.has_value());
    QCOMPARE(back->findings[0].confidence, std::optional<double>(0.97));
    const QString md = QString::fromUtf8(reviewToMarkdown(review));
    QVERIFY2(
        md.contains("**Governing Law** — risk **Low**, page 1, confidence 0.97"), qPrintable(md));
    QVERIFY2(md.contains(
                 QRegularExpression("\\*\\*Parties\\*\\* — risk \\*\\*[A-Za-z]+\\*\\*, page 1\n")),
        qPrintable(md));
    const QString html = QString::fromUtf8(reviewToHtml(review));
    QCOMPARE(html.count(QRegularExpression("confidence \\d")), 3);
    const QString csv = QString::fromUtf8(reviewFindingsToCsv(review));
    const QString partiesRow = csv.split("\r\n")[4];
    QVERIFY2(partiesRow.contains(QRegularExpression("^4,Parties,[^,]*,1,,\\d+,\\d+,,")),
        qPrintable(partiesRow));
}

void ReportExporterTest::setsPermissionsWithoutTouchingTheUmask()
{
    // A new report follows the umask; a replaced one keeps its mode; the umask itself is
    // never changed (it is process-wide, and worker threads create files meanwhile).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const mode_t before = ::umask(027);
    const QString fresh = dir.filePath("fresh.md");
    QVERIFY(writeFileAtomically(fresh, "new").ok());
    struct stat st { };
    QCOMPARE(::stat(QFile::encodeName(fresh).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0640);
    const QString kept = dir.filePath("kept.md");
    QVERIFY(writeFileAtomically(kept, "old").ok());
    QCOMPARE(::chmod(QFile::encodeName(kept).constData(), 0604), 0);
    QVERIFY(writeFileAtomically(kept, "replaced").ok());
    QCOMPARE(::stat(QFile::encodeName(kept).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0604);
    QCOMPARE(int(::umask(before)), 027);
}

void ReportExporterTest::refusesUnwritablePaths()
{
    const Review review = testing::sampleReview();
    // /proc refuses new files even for root.
    Result<void> r = exportReview(review, ReportFormat::Json, "/proc/clausewright-report.json");
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains("/proc/clausewright-report.json"));
    QVERIFY(!QFile::exists("/proc/clausewright-report.json"));

    r = exportReview(review, ReportFormat::Html, "/dev/full/report.html");
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).startsWith("/dev/full/report.html"));

    r = exportReview(review, ReportFormat::Csv, "/dev/full");
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains("not a regular file"));

    QTemporaryDir temp;
    r = exportReview(review, ReportFormat::Markdown, temp.path() + "/missing/folder/report.md");
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains("does not exist"));
    r = exportReview(review, ReportFormat::Markdown, QString());
    QVERIFY(!r.ok());
}

void ReportExporterTest::fullDiskLeavesNoFileAndKeepsTheOldOne()
{
    // A full disk, simulated with a file size limit: writes past it fail with EFBIG.
    QTemporaryDir temp;
    const QString path = temp.path() + "/report.html";
    const Review review = testing::sampleReview();
    QVERIFY(exportReview(review, ReportFormat::Markdown, path).ok());
    const QByteArray before = [&] {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    QVERIFY(!before.isEmpty());

    std::signal(SIGXFSZ, SIG_IGN);
    rlimit saved {};
    QCOMPARE(getrlimit(RLIMIT_FSIZE, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = 2048;
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
    const Result<void> full = exportReview(review, ReportFormat::Html, path);
    const Result<void> fresh
        = exportReview(review, ReportFormat::Html, temp.path() + "/new-report.html");
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &saved), 0);

    QVERIFY2(!full.ok(),
        qPrintable(QString("html of %1 bytes written under a 2048-byte limit")
                       .arg(reviewToHtml(review).size())));
    QVERIFY(QString::fromStdString(full.error().message).startsWith(path));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), before); // the old report is untouched
    QVERIFY(!fresh.ok());
    QVERIFY(!QFile::exists(temp.path() + "/new-report.html"));
    const QStringList left = QDir(temp.path()).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(left, QStringList { "report.html" }); // no temporary file left behind
}

namespace {

// The report's text: PDF through pdftotext (empty when poppler-utils is missing), the others
// as they are.
QString reportText(const Review& review, ReportFormat format)
{
    if (format != ReportFormat::Pdf) {
        Result<QByteArray> bytes = renderReport(review, format);
        return bytes ? QString::fromUtf8(*bytes) : QString();
    }
    if (QStandardPaths::findExecutable("pdftotext").isEmpty())
        return {};
    const QString pdf = QStringLiteral(CW_TEST_BINARY_DIR "/text-check.pdf");
    if (!exportReview(review, ReportFormat::Pdf, pdf).ok())
        return {};
    bool ok = false;
    return runTool("pdftotext", { "-enc", "UTF-8", pdf, "-" }, &ok).simplified();
}

} // namespace

// A finding corrected after the review (High to Medium) is counted as it now is in every
// format, the sentence included: the stored summary from when the review ran is not reused.
void ReportExporterTest::summaryFollowsACorrection()
{
    Review review = testing::sampleReview();
    review.findings[1].risk = Risk::Medium; // the renewal, High when reviewed
    review.findings[0].category = QStringLiteral("Cap on Liability"); // now found
    const QString sentence = QStringLiteral("4 findings against playbook \"Default buyer "
                                            "playbook\": 0 high, 2 medium, 1 low risk. Expected "
                                            "but not found: Limitation of Liability.");
    const QString md = reportText(review, ReportFormat::Markdown);
    QVERIFY2(md.contains(QStringLiteral("4 findings against playbook \"Default buyer playbook\": "
                                        "0 high, 2 medium, 1 low risk.")),
        qPrintable(md));
    QVERIFY(md.contains("| High | 0 |"));
    QVERIFY(md.contains("| Medium | 2 |"));
    QVERIFY(!md.contains("Cap on Liability,") && !md.contains(", Cap on Liability"));
    const QString html = reportText(review, ReportFormat::Html);
    QVERIFY2(html.contains(sentence.toHtmlEscaped()), qPrintable(html));
    const QJsonObject summary
        = QJsonDocument::fromJson(reviewToJson(review)).object().value("summary").toObject();
    QCOMPARE(summary.value("text").toString(), sentence);
    QCOMPARE(summary.value("high").toInt(), 0);
    QCOMPARE(summary.value("medium").toInt(), 2);
    QCOMPARE(summary.value("missing_categories").toArray().size(), 1);
    const QString pdf = reportText(review, ReportFormat::Pdf);
    if (pdf.isEmpty())
        QSKIP("poppler-utils (pdftotext) not installed: the PDF report was not checked");
    QVERIFY2(pdf.contains("0 high, 2 medium, 1 low risk."), qPrintable(pdf));
}

// A scanned page is named before anything else in every format, with what it means for the
// "expected but not found" list.
void ReportExporterTest::unreadPagesAreStatedAtTheTop()
{
    Review review = testing::sampleReview();
    review.document.pages[1].hasTextLayer = false;
    const QString md = reportText(review, ReportFormat::Markdown);
    const qsizetype note = md.indexOf("**Not read:** Page 2 of 2 has no text layer");
    QVERIFY2(note > 0, qPrintable(md));
    QVERIFY(note < md.indexOf("- **Document:**"));
    QVERIFY(md.contains("expected but not found"));
    const QString html = reportText(review, ReportFormat::Html);
    const qsizetype htmlNote = html.indexOf("<strong>Not read:</strong> Page 2 of 2");
    QVERIFY2(htmlNote > 0, qPrintable(html));
    QVERIFY(htmlNote < html.indexOf("<h2>Summary</h2>"));
    const QJsonObject summary
        = QJsonDocument::fromJson(reviewToJson(review)).object().value("summary").toObject();
    QCOMPARE(summary.value("unread_pages").toArray(), QJsonArray { 2 });
    QVERIFY(summary.value("unread_note").toString().startsWith("Page 2 of 2 has no text layer"));
    // Every page read: no note anywhere.
    QVERIFY(!reportText(testing::sampleReview(), ReportFormat::Markdown).contains("Not read"));
    const QString pdf = reportText(review, ReportFormat::Pdf);
    if (pdf.isEmpty())
        QSKIP("poppler-utils (pdftotext) not installed: the PDF report was not checked");
    const qsizetype pdfNote = pdf.indexOf("Not read: Page 2 of 2 has no text layer");
    QVERIFY2(pdfNote > 0, qPrintable(pdf));
    QVERIFY(pdfNote < pdf.indexOf("Summary"));
}

// A text file without form feeds has no pages: the reports say so and show "-", never
// "0 pages" or "page 0".
void ReportExporterTest::documentWithoutPagesShowsNoPageZero()
{
    Review review = testing::sampleReview();
    review.document.format = DocumentFormat::PlainText;
    review.document.pages.clear();
    for (TextLine& line : review.document.lines)
        line.page = 0;
    for (Clause& clause : review.clauses)
        clause.page = 0;
    for (Finding& finding : review.findings)
        finding.page = 0;
    const QRegularExpression pageZero(QStringLiteral("\\b0 pages|page 0|p\\. 0"));
    for (const ReportFormat format :
        { ReportFormat::Markdown, ReportFormat::Html, ReportFormat::Pdf }) {
        const QString text = reportText(review, format);
        if (text.isEmpty() && format == ReportFormat::Pdf)
            continue; // no pdftotext; the other two are checked
        QVERIFY2(!text.contains(pageZero), qPrintable(reportFormatName(format) + ": " + text));
        QVERIFY2(text.contains("no pages"), qPrintable(reportFormatName(format)));
    }
    const QString md = reportText(review, ReportFormat::Markdown);
    QVERIFY(md.contains("### 1. Governing Law (page -)"));
}

QTEST_MAIN(ReportExporterTest)
#include "report_exporter_test.moc"
