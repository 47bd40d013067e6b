// Slow: the redlines open in LibreOffice (soffice --headless --convert-to fodt) with their
// changes and comments, and LibreOffice's own reading of them gives the expected text when
// every change is accepted and the original when every change is rejected. Skipped (exit 77)
// where soffice is not installed: CW_WITH_LIBREOFFICE=1 installer/install-deps.sh adds it.
#include "app/ingest/document_reader.h"
#include "app/redline/redline_export.h"
#include "app/review/review_pipeline.h"
#ifndef Q_MOC_RUN
#include "redline_fixtures.h"
#endif
#include "office_text.h"
#include "redline_reading.h"

#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;
using namespace cw::redline;
using namespace cw::redline::testing;

namespace {

// The redline as LibreOffice reads it, through its flat ODF export.
OfficeText throughLibreOffice(const QString& docx, const QString& folder)
{
    QProcess soffice;
    soffice.start(QStandardPaths::findExecutable("soffice"),
        { "--headless", "--norestore", "-env:UserInstallation=file://" + folder + "/profile",
            "--convert-to", "fodt", "--outdir", folder, docx });
    if (!soffice.waitForFinished(120000) || soffice.exitCode() != 0)
        qFatal("soffice failed: %s", soffice.readAllStandardError().constData());
    const QString fodt = folder + "/" + QFileInfo(docx).completeBaseName() + ".fodt";
    QFile file(fodt);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("soffice wrote no %s: %s", qPrintable(fodt),
            soffice.readAllStandardOutput().constData());
    auto xml = parseXml(file.readAll(), fodt);
    if (!xml)
        qFatal("%s", xml.error().message.c_str());
    return readOfficeText(*xml);
}

XmlDocument documentPart(const QString& docx)
{
    auto package = DocxPackage::read(docx);
    if (!package)
        qFatal("%s", package.error().message.c_str());
    auto xml = parseXml(package->part("word/document.xml"), "word/document.xml");
    if (!xml)
        qFatal("%s", xml.error().message.c_str());
    return *xml;
}

} // namespace

class RedlineLibreOfficeTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        // CW_KEEP_TEST_FILES=1 keeps the redlines and LibreOffice's readings of them to look at.
        if (qEnvironmentVariableIntValue("CW_KEEP_TEST_FILES")) {
            m_dir.setAutoRemove(false);
            qInfo("files kept in %s", qPrintable(m_dir.path()));
        }
    }

    // The sample contract (a PDF) through the whole review, then its redline (a plain DOCX).
    void sampleRedlineOpensWithItsChangesAndComments()
    {
        ReviewOptions options;
        auto review = ReviewPipeline::runBlocking(
            QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf"), options);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        const QString out = m_dir.filePath("sample-redline.docx");
        auto summary = exportRedlineWithItsPlaybook(*review, out);
        QVERIFY2(summary.ok(), summary.ok() ? "" : summary.error().message.c_str());
        QVERIFY(summary->changes >= 1);
        const OfficeText office = throughLibreOffice(out, m_dir.path());
        QCOMPARE(office.insertions, summary->changes);
        QVERIFY(office.deletions >= summary->changes);
        QCOMPARE(office.commentAuthors.size(), summary->comments);
        for (const QString& author : office.commentAuthors)
            QCOMPARE(author, QStringLiteral("Clausewright"));
        QVERIFY(office.commentTexts.join(' ').contains("High risk (Uncapped Liability"));
        const XmlDocument xml = documentPart(out);
        QCOMPARE(office.accepted, simplifiedParagraphs(paragraphs(xml, Resolve::AcceptAll)));
        QCOMPARE(office.rejected, simplifiedParagraphs(paragraphs(xml, Resolve::RejectAll)));
        auto book = loadPlaybook(defaultPlaybookPath());
        QVERIFY(book.ok());
        QString uncapped;
        for (const PlaybookRule& r : book->rules)
            if (r.id == "uncapped-liability")
                uncapped = r.preferredText;
        QVERIFY(office.accepted.join(' ').contains(uncapped.simplified()));
        QVERIFY(!office.rejected.join(' ').contains(uncapped.simplified()));
    }

    // A DOCX edited in place: LibreOffice sees the same changes as Word would.
    void docxRedlineOpensWithItsChangesAndComments()
    {
        const QString path = m_dir.filePath("agreement.docx");
        writeDocx(path);
        auto document = readDocument(path);
        QVERIFY(document.ok());
        Review review;
        review.document = *document;
        const QString& t = review.document.text;
        auto on = [&t](const QString& category, const QString& rule, const QString& from,
                      const QString& to) {
            Finding f;
            f.category = category;
            f.ruleId = rule;
            f.risk = Risk::High;
            f.start = t.indexOf(from);
            f.end = t.indexOf(to, f.start) + to.size();
            f.text = t.mid(f.start, f.end - f.start);
            return f;
        };
        review.findings = { on("Uncapped Liability", "uncapped", "Supplier's liability", "claims."),
            on("Governing Law", "law", "This Agreement is governed", "Ruritania."),
            on("Renewal Term", "renewal", "The term is one year.", "automatically.") };
        const QString out = m_dir.filePath("agreement-redline.docx");
        auto summary = exportRedline(review, playbook(), out);
        QVERIFY2(summary.ok(), summary.ok() ? "" : summary.error().message.c_str());
        QCOMPARE(summary->changes, 3);
        const OfficeText office = throughLibreOffice(out, m_dir.path());
        QCOMPARE(office.insertions, 3);
        QCOMPARE(
            office.commentAuthors, QStringList({ "Clausewright", "Clausewright", "Clausewright" }));
        QCOMPARE(office.accepted,
            simplifiedParagraphs(
                { "SERVICES AGREEMENT", "Liability. " + kCap + " Customer buys only from Supplier.",
                    "Governing law. " + kLaw, "Fee", "100", "Term. " + kRenewal }));
        auto original = parseXml(documentXml(), "document.xml");
        QVERIFY(original.ok());
        QCOMPARE(office.rejected, simplifiedParagraphs(paragraphs(*original, Resolve::RejectAll)));
    }
};

int main(int argc, char** argv)
{
    if (QStandardPaths::findExecutable("soffice").isEmpty()) {
        std::printf("SKIP: soffice not found (install libreoffice-writer-nogui, or run "
                    "CW_WITH_LIBREOFFICE=1 installer/install-deps.sh)\n");
        return 77;
    }
    QCoreApplication app(argc, argv);
    RedlineLibreOfficeTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "redline_libreoffice_test.moc"
