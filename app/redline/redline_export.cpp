#include "app/redline/redline_export.h"

#include "app/redline/docx_package.h"
#include "app/redline/plain_docx.h"
#include "app/redline/redline_plan.h"

#include <QCryptographicHash>
#include <QFile>

namespace cw {

using namespace redline;

namespace {

constexpr const char* kCommentsType
    = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments";
constexpr const char* kCommentsContentType
    = "application/vnd.openxmlformats-officedocument.wordprocessingml.comments+xml";
constexpr const char* kRelationshipsNamespace
    = "http://schemas.openxmlformats.org/package/2006/relationships";

std::string quoted(const QString& path)
{
    return "'" + path.toStdString() + "'";
}

// The main document part that _rels/.rels names.
QString mainPart(const DocxPackage& package)
{
    auto rels = parseXml(package.part(QStringLiteral("_rels/.rels")), "_rels/.rels");
    if (rels) {
        for (const XmlNode& r : rels->root.children) {
            if (r.kind == XmlNode::Kind::Element
                && r.attribute("Type").endsWith(QLatin1String("/officeDocument"))) {
                QString target = r.attribute("Target");
                while (target.startsWith(QLatin1Char('/')))
                    target.remove(0, 1);
                if (!target.isEmpty() && !target.contains(QLatin1String("..")))
                    return target;
            }
        }
    }
    return QStringLiteral("word/document.xml");
}

XmlNode commentParagraph(const QString& prefix, const QString& text, bool first)
{
    auto w = [&prefix](const char* local) {
        return prefix.isEmpty() ? QString::fromLatin1(local)
                                : prefix + QLatin1Char(':') + QLatin1String(local);
    };
    XmlNode p = XmlNode::element(w("p"));
    if (first) {
        XmlNode ref = XmlNode::element(w("r"));
        ref.children.push_back(XmlNode::element(w("annotationRef")));
        p.children.push_back(std::move(ref));
    }
    XmlNode run = XmlNode::element(w("r"));
    XmlNode t = XmlNode::element(w("t"), { { "xml:space", "preserve" } });
    t.children.push_back(XmlNode::textNode(text));
    run.children.push_back(std::move(t));
    p.children.push_back(std::move(run));
    return p;
}

// Adds the comments to the package's comments part (made, with its relationship and content
// type, when the document has none).
Result<void> addComments(DocxPackage& package, const QString& documentPart,
    const QList<PlacedComment>& comments, const RevisionAuthor& author, const std::string& name)
{
    const qsizetype slash = documentPart.lastIndexOf(QLatin1Char('/'));
    const QString folder = documentPart.left(slash + 1);
    const QString relsPart
        = folder + QStringLiteral("_rels/") + documentPart.mid(slash + 1) + QStringLiteral(".rels");
    XmlDocument rels;
    if (package.contains(relsPart)) {
        auto parsed = parseXml(package.part(relsPart), relsPart);
        if (!parsed)
            return makeError(name + ": " + parsed.error().message);
        rels = std::move(*parsed);
    } else {
        rels.declaration
            = QStringLiteral(R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>)");
        rels.root = XmlNode::element("Relationships", { { "xmlns", kRelationshipsNamespace } });
    }
    QString commentsPart;
    QStringList ids;
    for (const XmlNode& r : rels.root.children) {
        if (r.kind != XmlNode::Kind::Element)
            continue;
        ids.append(r.attribute("Id"));
        if (r.attribute("Type") == QLatin1String(kCommentsType))
            commentsPart = folder + r.attribute("Target");
    }
    XmlDocument part;
    if (!commentsPart.isEmpty() && package.contains(commentsPart)) {
        auto parsed = parseXml(package.part(commentsPart), commentsPart);
        if (!parsed)
            return makeError(name + ": " + parsed.error().message);
        part = std::move(*parsed);
    } else {
        commentsPart = folder + QStringLiteral("comments.xml");
        QString id = QStringLiteral("rIdClausewrightComments");
        while (ids.contains(id))
            id += QLatin1Char('1');
        rels.root.children.push_back(XmlNode::element("Relationship",
            { { "Id", id }, { "Type", kCommentsType },
                { "Target", QStringLiteral("comments.xml") } }));
        package.setPart(relsPart, writeXml(rels));
        auto types = parseXml(package.part("[Content_Types].xml"), "[Content_Types].xml");
        if (!types)
            return makeError(name + ": " + types.error().message);
        types->root.children.push_back(XmlNode::element("Override",
            { { "PartName", QLatin1Char('/') + commentsPart },
                { "ContentType", kCommentsContentType } }));
        package.setPart("[Content_Types].xml", writeXml(*types));
        part.declaration
            = QStringLiteral(R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>)");
        part.root = XmlNode::element("w:comments", { { "xmlns:w", kWordNamespace } });
    }
    const QString prefix = wordPrefix(part.root);
    auto w = [&prefix](const char* local) {
        return prefix.isEmpty() ? QString::fromLatin1(local)
                                : prefix + QLatin1Char(':') + QLatin1String(local);
    };
    for (const PlacedComment& c : comments) {
        XmlNode comment = XmlNode::element(w("comment"),
            { { w("id"), QString::number(c.id) }, { w("author"), author.name },
                { w("date"), author.date }, { w("initials"), author.initials } });
        const QStringList paragraphs = c.text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        for (qsizetype i = 0; i < paragraphs.size(); ++i)
            comment.children.push_back(commentParagraph(prefix, paragraphs[i], i == 0));
        part.root.children.push_back(std::move(comment));
    }
    package.setPart(commentsPart, writeXml(part));
    return {};
}

ParagraphLines linesOf(const Document& document)
{
    ParagraphLines lines;
    for (const TextLine& line : document.lines)
        lines.append({ line.start, line.end });
    return lines;
}

} // namespace

Result<RedlineSummary> exportRedline(
    const Review& review, const Playbook& playbook, const QString& outPath, const QDateTime& when)
{
    const Document& document = review.document;
    const std::string source = quoted(document.path);
    DocxPackage package;
    QString documentPart;
    ParagraphLines lines;
    if (document.format == DocumentFormat::Docx) {
        QFile file(document.path);
        if (!file.open(QIODevice::ReadOnly))
            return makeError(source + ": cannot open the reviewed DOCX to redline it ("
                + file.errorString().toStdString() + ")");
        const QByteArray sha
            = QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256).toHex();
        if (!document.sha256.isEmpty() && QString::fromLatin1(sha) != document.sha256)
            return makeError(source
                + ": the file changed since it was reviewed; review it again "
                  "before exporting a redline");
        auto read = DocxPackage::read(document.path);
        if (!read)
            return read.error();
        package = std::move(*read);
        documentPart = mainPart(package);
        if (!package.contains(documentPart))
            return makeError(
                source + ": not a Word document (no " + documentPart.toStdString() + ")");
        lines = linesOf(document);
    } else {
        const PlainDocx plain = plainDocx(document.text);
        package = plain.package;
        documentPart = QStringLiteral("word/document.xml");
        lines = plain.paragraphs;
    }
    auto xml = parseXml(package.part(documentPart), documentPart);
    if (!xml)
        return makeError(source + ": " + xml.error().message);

    RevisionAuthor author;
    author.date = when.toUTC().toString(Qt::ISODate);
    int firstId = largestWordId(xml->root) + 1;
    const QList<RedlineEdit> edits = planRedline(review, playbook);
    const TrackedChangesResult placed
        = applyTrackedChanges(*xml, document.text, lines, edits, author, firstId);
    package.setPart(documentPart, writeXml(*xml));
    if (!placed.comments.isEmpty()) {
        if (auto added = addComments(package, documentPart, placed.comments, author, source);
            !added)
            return added.error();
    }
    if (auto written = package.write(outPath); !written)
        return written.error();
    RedlineSummary summary;
    summary.changes = placed.changes;
    summary.comments = int(placed.comments.size());
    summary.notPlaced = placed.notPlaced;
    return summary;
}

Result<RedlineSummary> exportRedlineWithItsPlaybook(const Review& review, const QString& outPath)
{
    QString path = review.settings.value(QStringLiteral("playbook")).toString();
    if (path.isEmpty() || !QFile::exists(path))
        path = defaultPlaybookPath();
    auto playbook = loadPlaybook(path);
    if (!playbook)
        return playbook.error();
    return exportRedline(review, *playbook, outPath);
}

} // namespace cw
