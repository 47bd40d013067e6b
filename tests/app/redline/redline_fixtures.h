#pragma once

// The redline test's playbook and DOCX parts.
#include "app/playbook/playbook.h"
#include "app/redline/docx_package.h"

namespace cw::redline::testing {

inline const QString kCap = QStringLiteral(
    "Each party's total liability under this Agreement shall not exceed the fees paid in the "
    "twelve (12) months before the claim.");
inline const QString kCapFallback = QStringLiteral("Liability is capped at twice the annual fees.");
inline const QString kLaw
    = QStringLiteral("This Agreement is governed by the laws of the State of New York.");
inline const QString kRenewal = QStringLiteral("This Agreement renews only by written agreement.");

inline Playbook playbook()
{
    auto book = parsePlaybook(QStringLiteral(R"(name: test firm
rules:
  - id: uncapped
    category: Uncapped Liability
    risk: high
    message: Liability is uncapped
    preferred_text: "%1"
    fallback_text: "%2"
  - id: law
    category: Governing Law
    risk: medium
    message: Governing law outside the list
    fallback_text: "%3"
  - id: renewal
    category: Renewal Term
    risk: medium
    message: Renews automatically
    preferred_text: "%4"
  - id: exclusive
    category: Exclusivity
    risk: medium
    message: Exclusive dealing
)")
                                  .arg(kCap, kCapFallback, kLaw, kRenewal)
                                  .toUtf8(),
        "test.yaml");
    if (!book)
        qFatal("%s", book.error().message.c_str());
    return *book;
}

inline const char kWordNs[] = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

// A DOCX with a numbered list, formatting inside a sentence, a hyperlink, a table and a tab.
inline QByteArray documentXml()
{
    return QByteArray(R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w=")")
        + kWordNs
        + R"(" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>
<w:p><w:r><w:t>SERVICES AGREEMENT</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t xml:space="preserve">Liability. </w:t></w:r><w:r><w:t xml:space="preserve">Supplier's liability under this Agreement is </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>unlimited</w:t></w:r><w:r><w:t xml:space="preserve"> for all claims.</w:t></w:r><w:r><w:t xml:space="preserve"> </w:t></w:r><w:r><w:t>Customer buys only from Supplier.</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t xml:space="preserve">Governing law. This Agreement is governed by the laws of </w:t></w:r><w:hyperlink w:anchor="law"><w:r><w:t>Ruritania</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Fee</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>100</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
<w:p><w:r><w:t>Term. The term is one year.</w:t></w:r></w:p>
<w:p><w:r><w:t>It renews each year</w:t></w:r><w:r><w:tab/><w:t>automatically.</w:t></w:r></w:p>
<w:sectPr/></w:body></w:document>)";
}

inline QByteArray numberingXml()
{
    return QByteArray(R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w=")")
        + kWordNs
        + R"("><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>)";
}

inline void writeDocx(const QString& path)
{
    DocxPackage package;
    package.setPart("[Content_Types].xml",
        R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>)");
    package.setPart("_rels/.rels", R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>)");
    package.setPart("word/document.xml", documentXml());
    package.setPart("word/_rels/document.xml.rels",
        R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>)");
    package.setPart("word/numbering.xml", numberingXml());
    if (auto written = package.write(path); !written)
        qFatal("%s", written.error().message.c_str());
}

} // namespace cw::redline::testing
