// Redlines: the playbook's wording as tracked changes with comments, checked on the XML the
// way Word resolves it (accept all gives the expected text, reject all the original), for a
// text contract (a plain DOCX is made) and for a DOCX edited in place.
#include "app/ingest/document_reader.h"
#include "app/redline/docx_package.h"
#include "app/redline/redline_export.h"
#include "app/redline/xml_tree.h"
// moc does not read raw string literals: it is kept out of the fixtures.
#ifndef Q_MOC_RUN
#include "redline_fixtures.h"
#endif
#include "redline_reading.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;
using namespace cw::redline;
using namespace cw::redline::testing;

namespace {

Finding findingOn(const QString& text, const QString& category, const QString& rule, Risk risk,
    const QString& from, const QString& to = {})
{
    Finding f;
    f.category = category;
    f.ruleId = rule;
    f.risk = risk;
    f.start = text.indexOf(from);
    f.end = to.isEmpty() ? f.start + from.size() : text.indexOf(to, f.start) + to.size();
    if (f.start < 0 || f.end < f.start)
        qFatal("test text lacks '%s'", qPrintable(from));
    f.text = text.mid(f.start, f.end - f.start);
    return f;
}

XmlDocument partOf(const QString& docx, const QString& part)
{
    auto package = DocxPackage::read(docx);
    if (!package)
        qFatal("%s", package.error().message.c_str());
    auto xml = parseXml(package->part(part), part);
    if (!xml)
        qFatal("%s", xml.error().message.c_str());
    return *xml;
}

void checkRevisionsAreClausewrights(const XmlDocument& xml)
{
    QList<const XmlNode*> marks;
    findElements(xml.root, u"w:ins", marks);
    findElements(xml.root, u"w:del", marks);
    QVERIFY(!marks.isEmpty());
    for (const XmlNode* m : marks) {
        QCOMPARE(m->attribute("w:author"), QStringLiteral("Clausewright"));
        QCOMPARE(m->attribute("w:date"), QStringLiteral("2026-12-03T10:00:00Z"));
    }
}

const QDateTime kWhen = QDateTime(QDate(2026, 12, 3), QTime(10, 0), Qt::UTC);

} // namespace

class RedlineTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void xmlTreeWritesBackWhatItRead()
    {
        const QByteArray xml
            = QByteArray("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>")
            + "\r\n<w:document xmlns:w=\"urn:w\" xmlns:mc=\"urn:mc\" mc:Ignorable=\"w14\">"
              "<!-- note --><w:body><w:p><w:r><w:t xml:space=\"preserve\"> </w:t></w:r>"
              "<w:r><w:t>a &amp; b &lt; c</w:t></w:r></w:p>\n  <w:p/></w:body></w:document>";
        auto parsed = parseXml(xml, "part.xml");
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        QCOMPARE(writeXml(*parsed), xml);
        QVERIFY(!parseXml("<a><b></a>", "bad.xml").ok());
        const auto dtd = parseXml("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "dtd.xml");
        QVERIFY(!dtd.ok());
        QVERIFY(QString::fromStdString(dtd.error().message).contains("dtd.xml"));
    }

    void redlinesATextContractAsAPlainDocx()
    {
        const QString text = QStringLiteral(
            "MASTER SERVICES AGREEMENT\n\n9. Liability. Supplier's liability is unlimited for "
            "all claims. Customer buys only from Supplier.\n\n10. Governing law. This Agreement "
            "is governed by the laws of Ruritania.\nSecond line of clause 10.\n\n");
        const QString path = m_dir.filePath("contract.txt");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.toUtf8());
        file.close();
        auto document = readText(path);
        QVERIFY(document.ok());
        Review review;
        review.document = *document;
        const QString& t = review.document.text;
        review.findings = { findingOn(t, "Uncapped Liability", "uncapped", Risk::High,
                                "Supplier's liability is unlimited for all claims."),
            findingOn(
                t, "Exclusivity", "exclusive", Risk::Medium, "Customer buys only from Supplier."),
            findingOn(t, "Governing Law", "law", Risk::Medium, "This Agreement is governed") };
        review.findings[2].end = t.indexOf("Ruritania.") + 10;
        review.findings[2].text
            = t.mid(review.findings[2].start, review.findings[2].end - review.findings[2].start);
        const QString out = m_dir.filePath("contract-redline.docx");
        auto summary = exportRedline(review, playbook(), out, kWhen);
        QVERIFY2(summary.ok(), summary.ok() ? "" : summary.error().message.c_str());
        QCOMPARE(summary->changes, 2);
        QCOMPARE(summary->comments, 3);
        QVERIFY(summary->notPlaced.isEmpty());

        const XmlDocument xml = partOf(out, "word/document.xml");
        QCOMPARE(paragraphs(xml, Resolve::RejectAll),
            QStringList({ "MASTER SERVICES AGREEMENT",
                "9. Liability. Supplier's liability is unlimited for all claims. Customer buys "
                "only from Supplier.",
                "10. Governing law. This Agreement is governed by the laws of Ruritania.\nSecond "
                "line of clause 10." }));
        QCOMPARE(paragraphs(xml, Resolve::AcceptAll),
            QStringList({ "MASTER SERVICES AGREEMENT",
                "9. Liability. " + kCap + " Customer buys only from Supplier.",
                "10. Governing law. " + kLaw + "\nSecond line of clause 10." }));
        checkRevisionsAreClausewrights(xml);
        QCOMPARE(countElements(xml.root, u"w:commentRangeStart"), 3);
        QCOMPARE(countElements(xml.root, u"w:commentRangeEnd"), 3);
        QCOMPARE(countElements(xml.root, u"w:commentReference"), 3);

        const XmlDocument comments = partOf(out, "word/comments.xml");
        QList<const XmlNode*> list;
        findElements(comments.root, u"w:comment", list);
        QCOMPARE(list.size(), 3);
        QCOMPARE(list[0]->attribute("w:author"), QStringLiteral("Clausewright"));
        QVERIFY(
            list[0]->allText().contains("High risk (Uncapped Liability, playbook rule uncapped)"));
        QVERIFY(list[0]->allText().contains("Liability is uncapped"));
        QVERIFY(list[0]->allText().contains("Fallback position: " + kCapFallback));
        QVERIFY(list[1]->allText().contains("Medium risk (Exclusivity"));
        QVERIFY(list[1]->allText().contains("no wording"));
        QVERIFY(QString::fromUtf8(writeXml(partOf(out, "[Content_Types].xml")))
                    .contains("/word/comments.xml\" ContentType=\"application/"
                              "vnd.openxmlformats-officedocument.wordprocessingml.comments+xml"));
        QVERIFY(QString::fromUtf8(writeXml(partOf(out, "word/_rels/document.xml.rels")))
                    .contains("relationships/comments\" Target=\"comments.xml\""));
        // DOCX ingest skips deleted text: it reads the redline as if every change were accepted.
        auto reread = readDocument(out);
        QVERIFY2(reread.ok(), reread.ok() ? "" : reread.error().message.c_str());
        QVERIFY(reread->text.contains(kCap));
        QVERIFY(!reread->text.contains("unlimited"));
    }

    void redlinesADocxInPlace()
    {
        const QString path = m_dir.filePath("agreement.docx");
        writeDocx(path);
        auto document = readDocument(path);
        QVERIFY2(document.ok(), document.ok() ? "" : document.error().message.c_str());
        Review review;
        review.document = *document;
        const QString& t = review.document.text;
        QVERIFY(t.contains("1.")); // the reader added the list label
        review.findings = { findingOn(t, "Uncapped Liability", "uncapped", Risk::High,
                                "Supplier's liability", "for all claims."),
            findingOn(t, "Exclusivity", "exclusive", Risk::Medium, "Customer buys only"),
            findingOn(t, "Governing Law", "law", Risk::Medium, "This Agreement is governed",
                "Ruritania."),
            findingOn(t, "Renewal Term", "renewal", Risk::Medium, "The term is one year.",
                "automatically."),
            findingOn(t, "Governing Law", "law", Risk::Medium, "Fee") };
        const QString out = m_dir.filePath("agreement-redline.docx");
        auto summary = exportRedline(review, playbook(), out, kWhen);
        QVERIFY2(summary.ok(), summary.ok() ? "" : summary.error().message.c_str());
        QCOMPARE(summary->changes, 3);
        QCOMPARE(summary->comments, 4);
        QCOMPARE(summary->notPlaced.size(), 1); // the finding in the table
        QVERIFY(summary->notPlaced.front().contains("not found"));

        auto original = parseXml(documentXml(), "document.xml");
        QVERIFY(original.ok());
        const XmlDocument xml = partOf(out, "word/document.xml");
        QCOMPARE(paragraphs(xml, Resolve::RejectAll), paragraphs(*original, Resolve::RejectAll));
        QCOMPARE(paragraphs(xml, Resolve::AcceptAll),
            QStringList(
                { "SERVICES AGREEMENT", "Liability. " + kCap + " Customer buys only from Supplier.",
                    "Governing law. " + kLaw, "Fee", "100", "Term. " + kRenewal }));
        checkRevisionsAreClausewrights(xml);
        QCOMPARE(countElements(xml.root, u"w:numPr"), 2); // numbering kept
        QCOMPARE(countElements(xml.root, u"w:hyperlink"), 1);
        // The deleted bold word stays bold; the replacement takes the formatting of the last
        // run it replaces.
        QList<const XmlNode*> deleted;
        findElements(xml.root, u"w:del", deleted);
        bool boldDeleted = false;
        for (const XmlNode* d : deleted) {
            const XmlNode* run = d->child(u"w:r");
            boldDeleted = boldDeleted
                || (run && run->child(u"w:rPr") && run->child(u"w:rPr")->child(u"w:b")
                    && run->allText() == "unlimited");
        }
        QVERIFY(boldDeleted);
        // Every part the redline does not touch is kept byte for byte.
        auto before = DocxPackage::read(path);
        auto after = DocxPackage::read(out);
        QVERIFY(before.ok() && after.ok());
        QCOMPARE(after->part("word/numbering.xml"), before->part("word/numbering.xml"));
        QCOMPARE(after->parts().front().first, QStringLiteral("[Content_Types].xml"));
        // DOCX ingest reads the redline as if every change were accepted, numbering included.
        auto reread = readDocument(out);
        QVERIFY(reread.ok());
        QVERIFY(reread->text.contains("2.\tGoverning law. " + kLaw));
        QVERIFY(!reread->text.contains("Ruritania"));
    }

    void refusesADocxChangedSinceTheReview()
    {
        const QString path = m_dir.filePath("changed.docx");
        writeDocx(path);
        auto document = readDocument(path);
        QVERIFY(document.ok());
        Review review;
        review.document = *document;
        QFile file(path);
        QVERIFY(file.open(QIODevice::Append));
        file.write("x");
        file.close();
        auto summary = exportRedline(review, playbook(), m_dir.filePath("changed-redline.docx"));
        QVERIFY(!summary.ok());
        QVERIFY(QString::fromStdString(summary.error().message).contains("changed since"));
        QVERIFY(QString::fromStdString(summary.error().message).contains("changed.docx"));
    }

    void overlappingChangesAreMadeOnce()
    {
        Review review;
        review.document.text = QStringLiteral("Supplier's liability is unlimited.");
        review.findings = { findingOn(review.document.text, "Uncapped Liability", "uncapped",
                                Risk::High, "Supplier's liability is unlimited."),
            findingOn(review.document.text, "Renewal Term", "renewal", Risk::Medium,
                "liability is unlimited.") };
        const QList<RedlineEdit> edits = planRedline(review, playbook());
        QCOMPARE(edits.size(), 2);
        QCOMPARE(edits[0].replacement, kCap);
        QVERIFY(edits[1].replacement.isEmpty());
        QVERIFY(edits[1].comment.contains("already changed for Uncapped Liability"));
        QVERIFY(edits[1].comment.contains(kRenewal));
    }

    void modelWordingFillsOnlyWhereThePlaybookHasNone()
    {
        Review review;
        review.document.text = QStringLiteral("Customer buys only from Supplier. Supplier's "
                                              "liability is unlimited. Either party may assign.");
        const QString proposal = QStringLiteral("Customer may buy from any supplier.");
        // Exclusivity's rule has no wording: the model's proposal becomes the change.
        Finding exclusive = findingOn(review.document.text, "Exclusivity", "exclusive",
            Risk::Medium, "Customer buys only from Supplier.");
        exclusive.suggestedText = proposal;
        // The playbook's own wording wins over the model's.
        Finding uncapped = findingOn(review.document.text, "Uncapped Liability", "uncapped",
            Risk::High, "Supplier's liability is unlimited.");
        uncapped.suggestedText = QStringLiteral("Liability is capped at one dollar.");
        // No rule set the risk (the model's judgement): its wording is still proposed...
        Finding assignment = findingOn(
            review.document.text, "Anti-Assignment", {}, Risk::High, "Either party may assign.");
        assignment.rationale = QStringLiteral("Assignment is free.");
        assignment.suggestedText = QStringLiteral("Neither party may assign without consent.");
        // ...but not for a low risk.
        Finding low = assignment;
        low.risk = Risk::Low;
        review.findings = { exclusive, uncapped, assignment, low };
        const QList<RedlineEdit> edits = planRedline(review, playbook());
        QCOMPARE(edits.size(), 3);
        QCOMPARE(edits[0].replacement, proposal);
        QVERIFY(edits[0].comment.contains("proposed by the language model"));
        QVERIFY(edits[0].comment.contains("playbook rule exclusive"));
        QCOMPARE(edits[1].replacement, kCap);
        QVERIFY(!edits[1].comment.contains("language model"));
        QCOMPARE(edits[2].replacement, assignment.suggestedText);
        QVERIFY(edits[2].comment.contains("the language model's judgement"));
        QVERIFY(edits[2].comment.contains("Assignment is free."));
    }
};

QTEST_GUILESS_MAIN(RedlineTest)
#include "redline_test.moc"
