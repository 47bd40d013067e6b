// DOCX ingest: the ZIP container (QuaZip, with caps against zip bombs) and the
// WordprocessingML body (paragraphs, runs, tables, list numbering) -> document text.
#include "app/ingest/document_reader.h"
#include "app/ingest/docx_numbering.h"
#include "app/ingest/docx_xml.h"
#include "app/ingest/text_assembler.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QHash>
#include <QXmlStreamReader>
#include <algorithm>
#include <optional>
#include <quazip.h>
#include <quazipfile.h>

namespace cw {

namespace {

using ingest::xmlAttribute;
using ingest::xmlIntAttribute;
using ingest::xmlOnOff;

std::string quoted(const QString& name)
{
    return "'" + name.toStdString() + "'";
}

// Reads parts of the archive while counting every byte against the caps.
class PartReader {
public:
    PartReader(QuaZip& zip, const QString& name, const ReadOptions& options)
        : m_zip(zip)
        , m_name(name)
        , m_options(options)
    {
    }

    // The part's bytes; nullopt when absent; an error when damaged or over the caps.
    Result<std::optional<QByteArray>> read(const QString& part)
    {
        if (!m_zip.setCurrentFile(part))
            return std::optional<QByteArray>();
        QuaZipFile file(&m_zip);
        if (!file.open(QIODevice::ReadOnly))
            return makeError(quoted(m_name) + ": the part " + part.toStdString()
                + " cannot be opened (damaged or encrypted archive)");
        QByteArray bytes;
        char chunk[65536];
        for (;;) {
            const qint64 got = file.read(chunk, sizeof chunk);
            if (got < 0)
                return makeError(quoted(m_name) + ": the part " + part.toStdString()
                    + " is damaged (" + file.errorString().toStdString() + ")");
            if (got == 0)
                break;
            m_total += got;
            if (bytes.size() + got > m_options.maxUncompressedBytes
                || m_total > m_options.maxUncompressedBytes)
                return makeError(quoted(m_name) + ": the part " + part.toStdString()
                    + " expands to more than " + std::to_string(m_options.maxUncompressedBytes)
                    + " bytes; refusing it (a zip bomb?)");
            bytes.append(chunk, got);
        }
        file.close();
        if (file.getZipError() != 0)
            return makeError(quoted(m_name) + ": the part " + part.toStdString()
                + " fails its checksum (damaged archive)");
        return std::optional<QByteArray>(std::move(bytes));
    }

private:
    QuaZip& m_zip;
    QString m_name;
    const ReadOptions& m_options;
    qint64 m_total = 0;
};

struct ParagraphStyle {
    QString basedOn;
    int numId = -1;
    int ilvl = -1;
    std::optional<bool> bold;
    bool heading = false;
};

struct StyleSheet {
    QHash<QString, ParagraphStyle> styles;

    // The style's own or inherited property, following basedOn a few steps.
    template <typename Get>
    auto resolve(const QString& id, Get get) const -> decltype(get(ParagraphStyle()))
    {
        QString current = id;
        for (int depth = 0; depth < 12 && !current.isEmpty(); ++depth) {
            const auto it = styles.constFind(current);
            if (it == styles.constEnd())
                break;
            if (auto value = get(*it))
                return value;
            current = it->basedOn;
        }
        return {};
    }
};

Result<StyleSheet> parseStyles(const QByteArray& bytes, const QString& part)
{
    StyleSheet sheet;
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement
            || xml.name() != QLatin1String("style"))
            continue;
        const QString id = xmlAttribute(xml, QLatin1StringView("styleId"));
        ParagraphStyle style;
        style.heading = id.startsWith(QLatin1String("Heading")) || id == QLatin1String("Title");
        while (xml.readNextStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("basedOn")) {
                style.basedOn = xmlAttribute(xml, QLatin1StringView("val"));
                xml.skipCurrentElement();
            } else if (name == QLatin1String("pPr") || name == QLatin1String("rPr")) {
                while (xml.readNextStartElement()) {
                    const auto inner = xml.name();
                    if (inner == QLatin1String("numPr")) {
                        while (xml.readNextStartElement()) {
                            if (xml.name() == QLatin1String("numId"))
                                style.numId = xmlIntAttribute(xml, QLatin1StringView("val"), -1);
                            else if (xml.name() == QLatin1String("ilvl"))
                                style.ilvl = xmlIntAttribute(xml, QLatin1StringView("val"), -1);
                            xml.skipCurrentElement();
                        }
                        continue;
                    }
                    if (inner == QLatin1String("outlineLvl"))
                        style.heading = true;
                    else if (inner == QLatin1String("b"))
                        style.bold = xmlOnOff(xml);
                    xml.skipCurrentElement();
                }
            } else {
                xml.skipCurrentElement();
            }
        }
        if (!id.isEmpty() && sheet.styles.size() < 100000)
            sheet.styles.insert(id, style);
    }
    if (xml.hasError())
        return makeError(ingest::xmlErrorText(xml, part));
    return sheet;
}

// The main document part named by _rels/.rels, or the usual one.
QString mainPartName(const std::optional<QByteArray>& rels)
{
    if (rels) {
        QXmlStreamReader xml(*rels);
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement
                || xml.name() != QLatin1String("Relationship"))
                continue;
            if (!xmlAttribute(xml, QLatin1StringView("Type"))
                     .endsWith(QLatin1String("/officeDocument")))
                continue;
            QString target = xmlAttribute(xml, QLatin1StringView("Target"));
            while (target.startsWith(QLatin1Char('/')))
                target.remove(0, 1);
            if (!target.isEmpty() && !target.contains(QLatin1String("..")))
                return target;
        }
    }
    return QStringLiteral("word/document.xml");
}

struct Paragraph {
    QString text;
    bool bold = false;
    double fontSize = 0.0;
    int renderedPage = 1; // 1 + the lastRenderedPageBreaks before it
    int explicitPage = 1; // 1 + the <w:br w:type="page"/> before it
    int section = 0; // 0-based
    bool tableRow = false;
};

// Streams word/document.xml into paragraphs and table rows.
class BodyParser {
public:
    BodyParser(const StyleSheet& styles, ingest::DocxNumbering& numbering)
        : m_styles(styles)
        , m_numbering(numbering)
    {
    }

    Result<QList<Paragraph>> parse(const QByteArray& bytes, const QString& part)
    {
        QXmlStreamReader xml(bytes);
        while (!xml.atEnd()) {
            const auto token = xml.readNext();
            if (token == QXmlStreamReader::DTD)
                return makeError(part.toStdString() + " declares a DTD, which DOCX parts never do");
            if (token == QXmlStreamReader::StartElement)
                start(xml);
            else if (token == QXmlStreamReader::EndElement)
                end(xml.name());
        }
        if (xml.hasError())
            return makeError(ingest::xmlErrorText(xml, part));
        return m_out;
    }

    // Where the pages are, in the order of what the file can tell: the page breaks Word saw
    // when it last laid the file out (lastRenderedPageBreak); else the breaks the author put
    // in (a page break, a section that starts on a new page); else the sections, so that
    // even a file without any break has pages, never "page 0".
    int pageCount() const
    {
        if (m_renderedBreaks > 0)
            return m_renderedBreaks + 1;
        const int explicitBreaks = m_explicitBreaks + sectionPageBreaksBefore(sectionCount() - 1);
        return explicitBreaks > 0 ? explicitBreaks + 1 : sectionCount();
    }
    int pageOf(const Paragraph& paragraph) const
    {
        if (m_renderedBreaks > 0)
            return paragraph.renderedPage;
        if (m_explicitBreaks + sectionPageBreaksBefore(sectionCount() - 1) > 0)
            return paragraph.explicitPage + sectionPageBreaksBefore(paragraph.section);
        return paragraph.section + 1;
    }

private:
    struct Open {
        QString text;
        QString style;
        int numId = -1;
        int ilvl = -1;
        int boldChars = 0;
        int plainChars = 0;
        double fontSize = 0.0;
        int renderedPage = 1;
        int explicitPage = 1;
        int section = 0;
        bool endsSection = false; // its pPr holds a sectPr: the section ends with it
    };

    int sectionCount() const { return int(m_sectionStarts.size()) + 1; }
    // Sections 1..`section` that start on a new page: a section's w:type says how it starts
    // after the one before (nextPage, the default, oddPage, evenPage; continuous and
    // nextColumn stay on the page).
    int sectionPageBreaksBefore(int section) const
    {
        int breaks = 0;
        for (int s = 1; s <= section && s < sectionCount(); ++s) {
            const QString& type = s < m_sectionTypes.size() ? m_sectionTypes[s] : QString();
            breaks += type != QLatin1String("continuous") && type != QLatin1String("nextColumn");
        }
        return breaks;
    }

    // Reads a sectPr (in a paragraph's pPr or at the end of the body): the type of the
    // section it closes.
    void readSectionProperties(QXmlStreamReader& xml)
    {
        QString type;
        while (xml.readNextStartElement()) {
            if (xml.name() == QLatin1String("type"))
                type = xmlAttribute(xml, QLatin1StringView("val"));
            xml.skipCurrentElement();
        }
        m_sectionTypes.append(type);
    }

    void start(QXmlStreamReader& xml)
    {
        const auto name = xml.name();
        if (name == QLatin1String("Fallback") || name == QLatin1String("del")
            || name == QLatin1String("instrText") || name == QLatin1String("delText")
            || name == QLatin1String("footnoteReference")) {
            xml.skipCurrentElement();
        } else if (name == QLatin1String("sectPr")) {
            // The body's own sectPr (the last section's); those in a pPr are read there.
            readSectionProperties(xml);
        } else if (name == QLatin1String("p")) {
            m_open.append(Open {});
            m_open.back().renderedPage = m_renderedBreaks + 1;
            m_open.back().explicitPage = m_explicitBreaks + 1;
            m_open.back().section = currentSection();
        } else if (name == QLatin1String("pPr") && !m_open.isEmpty()) {
            readParagraphProperties(xml, m_open.back());
        } else if (name == QLatin1String("r")) {
            m_runBold = std::nullopt;
            m_runSize = 0.0;
        } else if (name == QLatin1String("rPr")) {
            readRunProperties(xml);
        } else if (name == QLatin1String("t") && !m_open.isEmpty()) {
            addText(xml.readElementText(QXmlStreamReader::IncludeChildElements));
        } else if (name == QLatin1String("tab") && !m_open.isEmpty()) {
            m_open.back().text += QLatin1Char('\t');
        } else if ((name == QLatin1String("br") || name == QLatin1String("cr"))
            && !m_open.isEmpty()) {
            if (xmlAttribute(xml, QLatin1StringView("type")) == QLatin1String("page"))
                ++m_explicitBreaks;
            m_open.back().text += QLatin1Char('\n');
        } else if (name == QLatin1String("noBreakHyphen") && !m_open.isEmpty()) {
            m_open.back().text += QLatin1Char('-');
        } else if (name == QLatin1String("lastRenderedPageBreak")) {
            ++m_renderedBreaks;
        } else if (name == QLatin1String("tbl")) {
            ++m_tableDepth;
        } else if (name == QLatin1String("tr") && m_tableDepth == 1) {
            m_cells.clear();
        } else if (name == QLatin1String("tc") && m_tableDepth == 1) {
            m_cells.append(QString());
        }
    }

    void end(QStringView name)
    {
        if (name == QLatin1String("p") && !m_open.isEmpty()) {
            Open paragraph = m_open.takeLast();
            const bool endsSection = paragraph.endsSection;
            finishParagraph(std::move(paragraph));
            if (endsSection)
                m_sectionStarts.append(m_out.size());
        } else if (name == QLatin1String("tbl") && m_tableDepth > 0) {
            --m_tableDepth;
        } else if (name == QLatin1String("tr") && m_tableDepth == 1) {
            QStringList cells;
            for (const QString& cell : std::as_const(m_cells))
                cells.append(cell.trimmed());
            const QString row = cells.join(QLatin1Char('\t')).trimmed();
            if (!row.isEmpty())
                m_out.append(Paragraph { row, false, 0.0, m_renderedBreaks + 1,
                    m_explicitBreaks + 1, currentSection(), true });
            m_cells.clear();
        }
    }

    int currentSection() const { return int(m_sectionStarts.size()); }

    void readParagraphProperties(QXmlStreamReader& xml, Open& paragraph)
    {
        while (xml.readNextStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("pStyle")) {
                paragraph.style = xmlAttribute(xml, QLatin1StringView("val"));
            } else if (name == QLatin1String("numPr")) {
                while (xml.readNextStartElement()) {
                    if (xml.name() == QLatin1String("numId"))
                        paragraph.numId = xmlIntAttribute(xml, QLatin1StringView("val"), -1);
                    else if (xml.name() == QLatin1String("ilvl"))
                        paragraph.ilvl = xmlIntAttribute(xml, QLatin1StringView("val"), -1);
                    xml.skipCurrentElement();
                }
                continue;
            }
            if (name == QLatin1String("sectPr")) {
                readSectionProperties(xml);
                paragraph.endsSection = true;
                continue;
            }
            xml.skipCurrentElement();
        }
    }

    void readRunProperties(QXmlStreamReader& xml)
    {
        while (xml.readNextStartElement()) {
            if (xml.name() == QLatin1String("b"))
                m_runBold = xmlOnOff(xml);
            else if (xml.name() == QLatin1String("sz"))
                m_runSize = xmlIntAttribute(xml, QLatin1StringView("val"), 0) / 2.0;
            xml.skipCurrentElement();
        }
    }

    void addText(const QString& text)
    {
        Open& paragraph = m_open.back();
        paragraph.text += text;
        const bool bold = m_runBold.value_or(
            m_styles.resolve(paragraph.style, [](const ParagraphStyle& s) { return s.bold; })
                .value_or(false));
        int visible = 0;
        for (QChar c : text)
            visible += c.isSpace() ? 0 : 1;
        (bold ? paragraph.boldChars : paragraph.plainChars) += visible;
        if (m_runSize > 0.0)
            paragraph.fontSize = std::max(paragraph.fontSize, m_runSize);
    }

    void finishParagraph(Open paragraph)
    {
        int numId = paragraph.numId;
        int ilvl = paragraph.ilvl;
        if (numId < 0) {
            numId = m_styles
                        .resolve(paragraph.style,
                            [](const ParagraphStyle& s) {
                                return s.numId >= 0 ? std::optional<int>(s.numId) : std::nullopt;
                            })
                        .value_or(-1);
        }
        if (ilvl < 0) {
            ilvl = m_styles
                       .resolve(paragraph.style,
                           [](const ParagraphStyle& s) {
                               return s.ilvl >= 0 ? std::optional<int>(s.ilvl) : std::nullopt;
                           })
                       .value_or(0);
        }
        QString text = paragraph.text;
        if (numId > 0 && !text.trimmed().isEmpty())
            text = m_numbering.nextLabel(numId, ilvl) + text;
        text = text.trimmed();
        if (text.isEmpty())
            return;
        if (m_tableDepth > 0 && !m_cells.isEmpty()) {
            QString& cell = m_cells.back();
            if (!cell.isEmpty())
                cell += QLatin1Char(' ');
            cell += QString(text)
                        .replace(QLatin1Char('\t'), QLatin1Char(' '))
                        .replace(QLatin1Char('\n'), QLatin1Char(' '));
            return;
        }
        const bool heading
            = m_styles
                  .resolve(paragraph.style,
                      [](const ParagraphStyle& s) {
                          return s.heading ? std::optional<bool>(true) : std::nullopt;
                      })
                  .value_or(false);
        Paragraph out;
        out.text = text;
        out.bold = heading || (paragraph.boldChars > 0 && paragraph.plainChars == 0);
        out.fontSize = paragraph.fontSize;
        out.renderedPage = paragraph.renderedPage;
        out.explicitPage = paragraph.explicitPage;
        out.section = paragraph.section;
        m_out.append(out);
    }

    const StyleSheet& m_styles;
    ingest::DocxNumbering& m_numbering;
    QList<Open> m_open; // paragraphs being read; nested ones come from text boxes
    QStringList m_cells;
    QList<Paragraph> m_out;
    std::optional<bool> m_runBold;
    double m_runSize = 0.0;
    int m_tableDepth = 0;
    int m_renderedBreaks = 0;
    int m_explicitBreaks = 0;
    QList<qsizetype>
        m_sectionStarts; // index in m_out of each section's first paragraph but the first's
    QStringList m_sectionTypes; // w:type of each section, in order ("" where none is given)
};

} // namespace

Result<Document> readDocxBytes(
    const QByteArray& bytes, const QString& name, const ReadOptions& options)
{
    if (bytes.isEmpty())
        return makeError(quoted(name) + ": the file is empty (0 bytes), not a DOCX");
    QByteArray data = bytes;
    QBuffer buffer(&data);
    QuaZip zip(&buffer);
    if (!zip.open(QuaZip::mdUnzip))
        return makeError(quoted(name) + ": not a DOCX file (not a readable ZIP archive)");
    const int entries = zip.getEntriesCount();
    if (entries < 0 || entries > options.maxZipEntries)
        return makeError(quoted(name) + ": the archive lists " + std::to_string(entries)
            + " entries (at most " + std::to_string(options.maxZipEntries) + "); refusing it");
    PartReader reader(zip, name, options);

    auto rels = reader.read(QStringLiteral("_rels/.rels"));
    if (!rels)
        return rels.error();
    const QString mainPart = mainPartName(*rels);
    auto body = reader.read(mainPart);
    if (!body)
        return body.error();
    if (!*body)
        return makeError(quoted(name) + ": not a Word document (the archive has no "
            + mainPart.toStdString() + ")");

    const QString folder = mainPart.contains(QLatin1Char('/'))
        ? mainPart.left(mainPart.lastIndexOf(QLatin1Char('/')) + 1)
        : QString();
    StyleSheet styles;
    auto stylesPart = reader.read(folder + QStringLiteral("styles.xml"));
    if (!stylesPart)
        return stylesPart.error();
    if (*stylesPart) {
        auto parsed = parseStyles(**stylesPart, folder + QStringLiteral("styles.xml"));
        if (!parsed)
            return makeError(quoted(name) + ": " + parsed.error().message);
        styles = std::move(*parsed);
    }
    ingest::DocxNumbering numbering;
    auto numberingPart = reader.read(folder + QStringLiteral("numbering.xml"));
    if (!numberingPart)
        return numberingPart.error();
    if (*numberingPart) {
        auto parsed = ingest::DocxNumbering::parse(
            **numberingPart, folder + QStringLiteral("numbering.xml"));
        if (!parsed)
            return makeError(quoted(name) + ": " + parsed.error().message);
        numbering = std::move(*parsed);
    }

    BodyParser parser(styles, numbering);
    auto paragraphs = parser.parse(**body, mainPart);
    if (!paragraphs)
        return makeError(quoted(name) + ": " + paragraphs.error().message);

    Document document;
    document.path = name;
    document.format = DocumentFormat::Docx;
    document.sha256
        = QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
    for (int page = 1; page <= parser.pageCount(); ++page)
        document.pages.append(PageInfo { page, {}, true });
    bool previousRow = false;
    for (const Paragraph& paragraph : std::as_const(*paragraphs)) {
        if (!document.text.isEmpty())
            document.text += (previousRow && paragraph.tableRow) ? QStringLiteral("\n")
                                                                 : QStringLiteral("\n\n");
        TextLine line;
        line.page = std::clamp(parser.pageOf(paragraph), 1, parser.pageCount());
        line.start = document.text.size();
        document.text += paragraph.text;
        line.end = document.text.size();
        line.bold = paragraph.bold;
        line.fontSize = paragraph.fontSize;
        document.lines.append(line);
        previousRow = paragraph.tableRow;
    }
    if (document.text.trimmed().isEmpty())
        return makeError(quoted(name) + ": the document contains no text");
    document.title = ingest::guessTitle(document.text);
    return document;
}

} // namespace cw
