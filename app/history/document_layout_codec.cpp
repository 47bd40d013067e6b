#include "app/history/document_layout_codec.h"

#include <QDataStream>
#include <QIODevice>

namespace cw::history {
namespace {

constexpr quint8 kLayoutVersion = 1;
constexpr int kMaxUncompressed = 512 * 1024 * 1024;

} // namespace

QByteArray encodeDocumentLayout(const Document& document)
{
    QByteArray raw;
    QDataStream out(&raw, QIODevice::WriteOnly);
    out.setVersion(QDataStream::Qt_6_4);
    out << kLayoutVersion << quint32(document.pages.size());
    for (const PageInfo& page : document.pages)
        out << qint32(page.number) << page.sizePt.width() << page.sizePt.height()
            << page.hasTextLayer;
    out << quint32(document.lines.size());
    for (const TextLine& line : document.lines)
        out << qint32(line.page) << line.box.x() << line.box.y() << line.box.width()
            << line.box.height() << qint64(line.start) << qint64(line.end) << line.bold
            << line.fontSize;
    out << quint32(document.warnings.size());
    for (const QString& warning : document.warnings)
        out << warning;
    return qCompress(raw, 6);
}

std::optional<Document> decodeDocumentLayout(const QByteArray& blob, Document document)
{
    if (blob.isEmpty())
        return document;
    if (blob.size() < 4)
        return std::nullopt;
    const auto* size = reinterpret_cast<const uchar*>(blob.constData());
    const quint32 expected = (quint32(size[0]) << 24) | (quint32(size[1]) << 16)
        | (quint32(size[2]) << 8) | quint32(size[3]);
    if (expected > quint32(kMaxUncompressed))
        return std::nullopt;
    const QByteArray raw = qUncompress(blob);
    if (raw.isEmpty())
        return std::nullopt;
    QDataStream in(raw);
    in.setVersion(QDataStream::Qt_6_4);
    quint8 version = 0;
    quint32 count = 0;
    in >> version >> count;
    // A page record is 4 + 8 + 8 + 1 bytes, a line 4 + 4*8 + 2*8 + 1 + 8.
    if (version != kLayoutVersion || count > quint32(raw.size() / 21))
        return std::nullopt;
    document.pages.clear();
    document.pages.reserve(count);
    for (quint32 i = 0; i < count; ++i) {
        qint32 number = 0;
        double width = 0;
        double height = 0;
        bool text = true;
        in >> number >> width >> height >> text;
        document.pages.append(PageInfo { number, QSizeF(width, height), text });
    }
    in >> count;
    if (in.status() != QDataStream::Ok || count > quint32(raw.size() / 61))
        return std::nullopt;
    document.lines.clear();
    document.lines.reserve(count);
    for (quint32 i = 0; i < count; ++i) {
        qint32 page = 0;
        double x = 0, y = 0, w = 0, h = 0, fontSize = 0;
        qint64 start = 0, end = 0;
        bool bold = false;
        in >> page >> x >> y >> w >> h >> start >> end >> bold >> fontSize;
        document.lines.append(TextLine { page, QRectF(x, y, w, h), start, end, bold, fontSize });
    }
    in >> count;
    if (in.status() != QDataStream::Ok || count > quint32(raw.size() / 4))
        return std::nullopt;
    document.warnings.clear();
    for (quint32 i = 0; i < count && in.status() == QDataStream::Ok; ++i) {
        QString warning;
        in >> warning;
        document.warnings.append(warning);
    }
    if (in.status() != QDataStream::Ok)
        return std::nullopt;
    return document;
}

} // namespace cw::history
