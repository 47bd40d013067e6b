// libFuzzer target: any document.xml is either refused with an error or redlined into XML that
// parses again, whatever spans the edits cover.
#include "app/ingest/document_reader.h"
#include "app/redline/docx_package.h"
#include "app/redline/tracked_changes.h"

#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace cw::redline;
    const QByteArray xml(reinterpret_cast<const char*>(data), qsizetype(size));
    auto tree = parseXml(xml, QStringLiteral("word/document.xml"));
    if (!tree.ok())
        return 0;
    DocxPackage package;
    package.setPart(QStringLiteral("word/document.xml"), xml);
    auto zip = package.archive();
    if (!zip.ok())
        __builtin_trap();
    auto document = cw::readDocxBytes(*zip, QStringLiteral("fuzz.docx"), {});
    if (!document.ok())
        return 0;
    ParagraphLines lines;
    for (const cw::TextLine& line : document->lines)
        lines.append({ line.start, line.end });
    QList<RedlineEdit> edits;
    const qsizetype n = document->text.size();
    for (qsizetype start = 0; start < n; start += 1 + (start * 7 + 3) % 41) {
        RedlineEdit edit;
        edit.start = start;
        edit.end = std::min(n, start + 1 + (start * 13) % 57);
        edit.replacement = (start % 3) ? QStringLiteral("new\nwording") : QString();
        edit.comment = QStringLiteral("why");
        edits.append(edit);
        start = edit.end;
    }
    RevisionAuthor author;
    author.date = QStringLiteral("2026-01-01T00:00:00Z");
    applyTrackedChanges(*tree, document->text, lines, edits, author, largestWordId(tree->root) + 1);
    if (!parseXml(writeXml(*tree), QStringLiteral("out.xml")).ok())
        __builtin_trap();
    return 0;
}
