#include "app/redline/plain_docx.h"

#include "app/redline/xml_tree.h"

namespace cw::redline {

namespace {

constexpr const char* kDeclaration = R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>)";

const char kContentTypes[] = R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>)";

const char kPackageRels[] = R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>)";

const char kDocumentRels[] = R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>)";

// 11 pt text with a little space after each paragraph, so the text reads as a contract.
const char kStyles[] = R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:docDefaults><w:rPrDefault><w:rPr><w:sz w:val="22"/><w:szCs w:val="22"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="259" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style></w:styles>)";

bool breaksBlock(QChar c)
{
    return c.unicode() < 0x20 && c != QLatin1Char('\t') && c != QLatin1Char('\n');
}

XmlNode paragraphOf(const QString& block)
{
    XmlNode p = XmlNode::element("w:p");
    XmlNode run = XmlNode::element("w:r");
    QString pending;
    auto flush = [&] {
        if (pending.isEmpty())
            return;
        XmlNode t = XmlNode::element("w:t", { { "xml:space", "preserve" } });
        t.children.push_back(XmlNode::textNode(pending));
        run.children.push_back(std::move(t));
        pending.clear();
    };
    for (QChar c : block) {
        if (c == QLatin1Char('\n') || c == QLatin1Char('\t')) {
            flush();
            run.children.push_back(XmlNode::element(c == QLatin1Char('\n') ? "w:br" : "w:tab"));
        } else {
            pending += c;
        }
    }
    flush();
    p.children.push_back(std::move(run));
    return p;
}

} // namespace

PlainDocx plainDocx(const QString& text)
{
    PlainDocx out;
    XmlDocument document;
    document.declaration = QString::fromLatin1(kDeclaration);
    document.root = XmlNode::element("w:document",
        { { "xmlns:w", kWordNamespace },
            { "xmlns:r", "http://schemas.openxmlformats.org/officeDocument/2006/relationships" } });
    XmlNode body = XmlNode::element("w:body");
    qsizetype i = 0;
    const qsizetype n = text.size();
    while (i < n) {
        // A block: from the next visible character to the next blank line or control character.
        while (i < n && (text.at(i).isSpace() || breaksBlock(text.at(i))))
            ++i;
        if (i >= n)
            break;
        qsizetype end = i;
        qsizetype lastVisible = i;
        while (end < n && !breaksBlock(text.at(end))) {
            if (text.at(end) == QLatin1Char('\n')) {
                qsizetype k = end + 1;
                while (k < n && text.at(k) != QLatin1Char('\n') && text.at(k).isSpace())
                    ++k;
                if (k >= n || text.at(k) == QLatin1Char('\n'))
                    break; // a blank line ends the block
            }
            if (!text.at(end).isSpace())
                lastVisible = end;
            ++end;
        }
        const qsizetype blockEnd = lastVisible + 1;
        body.children.push_back(paragraphOf(text.mid(i, blockEnd - i)));
        out.paragraphs.append({ i, blockEnd });
        i = end;
    }
    XmlNode section = XmlNode::element("w:sectPr");
    section.children.push_back(
        XmlNode::element("w:pgSz", { { "w:w", "11906" }, { "w:h", "16838" } }));
    section.children.push_back(XmlNode::element("w:pgMar",
        { { "w:top", "1440" }, { "w:right", "1440" }, { "w:bottom", "1440" }, { "w:left", "1440" },
            { "w:header", "708" }, { "w:footer", "708" }, { "w:gutter", "0" } }));
    body.children.push_back(std::move(section));
    document.root.children.push_back(std::move(body));
    out.package.setPart("[Content_Types].xml", QByteArray(kContentTypes));
    out.package.setPart("_rels/.rels", QByteArray(kPackageRels));
    out.package.setPart("word/document.xml", writeXml(document));
    out.package.setPart("word/_rels/document.xml.rels", QByteArray(kDocumentRels));
    out.package.setPart("word/styles.xml", QByteArray(kStyles));
    return out;
}

} // namespace cw::redline
