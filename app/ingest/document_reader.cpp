#include "app/ingest/document_reader.h"

#include "app/ingest/text_assembler.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QStringDecoder>
#include <cerrno>

namespace cw {

namespace {

std::string quoted(const QString& name)
{
    return "'" + name.toStdString() + "'";
}

Result<QByteArray> readFileBytes(const QString& path)
{
    const QFileInfo info(path);
    if (path.isEmpty())
        return makeError("no file name given");
    if (!info.exists())
        return makeError(quoted(path) + ": no such file");
    if (info.isDir())
        return makeError(quoted(path) + ": is a folder, not a document");
    if (info.size() > kMaxDocumentBytes)
        return makeError(quoted(path) + ": the file is too large to review ("
            + QString::number(double(info.size()) / 1e6, 'f', 0).toStdString()
            + " MB; the limit is " + std::to_string(kMaxDocumentBytes / 1000000)
            + " MB). A file this large is usually scanned pages: split it or reduce its "
              "images, then open the parts");
    QFile file(path);
    errno = 0;
    if (!file.open(QIODevice::ReadOnly)) {
        if (errno == EACCES || errno == EPERM)
            return makeError(quoted(path)
                + ": permission denied (you may not read this file; copy it somewhere you can, "
                  "or ask its owner)");
        return makeError(
            quoted(path) + ": cannot be read (" + file.errorString().toStdString() + ")");
    }
    QByteArray bytes = file.readAll();
    if (file.error() != QFileDevice::NoError)
        return makeError(quoted(path) + ": read error (" + file.errorString().toStdString() + ")");
    return bytes;
}

QString hexSha256(const QByteArray& bytes)
{
    return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

bool looksLikePdf(const QByteArray& bytes)
{
    return bytes.left(1024).contains("%PDF-");
}

bool looksLikeZip(const QByteArray& bytes)
{
    return bytes.startsWith("PK\x03\x04") || bytes.startsWith("PK\x05\x06");
}

Result<QString> decodeText(const QByteArray& bytes, const QString& name)
{
    auto encoding = QStringConverter::encodingForData(bytes);
    QStringDecoder decoder(encoding.value_or(QStringConverter::Utf8));
    QString text = decoder.decode(bytes);
    if (decoder.hasError())
        return makeError(quoted(name) + ": not valid " + (encoding ? "UTF-16/32" : "UTF-8")
            + " text (save it as UTF-8)");
    if (!encoding && bytes.contains('\0'))
        return makeError(quoted(name) + ": a binary file of unknown format, not text, PDF or DOCX");
    return text;
}

} // namespace

Document documentFromText(const QString& text, const QString& name)
{
    Document document;
    document.path = name;
    document.format = DocumentFormat::PlainText;
    document.text = text;
    // Form feeds separate pages where a converter kept them; otherwise there are no pages.
    const bool paged = text.contains(QLatin1Char('\f'));
    int page = paged ? 1 : 0;
    if (paged)
        document.pages.append(PageInfo { 1, {}, true });
    qsizetype start = 0;
    for (qsizetype i = 0; i <= text.size(); ++i) {
        const bool end = i == text.size();
        const QChar c = end ? QChar() : text.at(i);
        if (!end && c != QLatin1Char('\n') && c != QLatin1Char('\f'))
            continue;
        qsizetype lineEnd = i;
        if (lineEnd > start && text.at(lineEnd - 1) == QLatin1Char('\r'))
            --lineEnd;
        if (lineEnd > start) {
            TextLine line;
            line.page = page;
            line.start = start;
            line.end = lineEnd;
            document.lines.append(line);
        }
        if (c == QLatin1Char('\f')) {
            ++page;
            document.pages.append(PageInfo { page, {}, true });
        }
        start = i + 1;
    }
    document.title = ingest::guessTitle(text);
    return document;
}

Result<Document> readText(const QString& path)
{
    Result<QByteArray> bytes = readFileBytes(path);
    if (!bytes)
        return bytes.error();
    Result<QString> text = decodeText(*bytes, path);
    if (!text)
        return text.error();
    Document document = documentFromText(*text, path);
    document.sha256 = hexSha256(*bytes);
    return document;
}

Result<Document> readDocument(const QString& path, const ReadOptions& options)
{
    Result<QByteArray> bytes = readFileBytes(path);
    if (!bytes)
        return bytes.error();
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (bytes->isEmpty())
        return makeError(quoted(path) + ": the file is empty (0 bytes)");
    if (looksLikePdf(*bytes) || suffix == QLatin1String("pdf"))
        return readPdfBytes(*bytes, path, options);
    if (looksLikeZip(*bytes) || suffix == QLatin1String("docx"))
        return readDocxBytes(*bytes, path, options);
    if (suffix == QLatin1String("doc") || bytes->startsWith("\xD0\xCF\x11\xE0"))
        return makeError(
            quoted(path) + ": a legacy Word .doc file; save it as .docx or PDF and open that");
    Result<QString> text = decodeText(*bytes, path);
    if (!text)
        return text.error();
    Document document = documentFromText(*text, path);
    document.sha256 = hexSha256(*bytes);
    if (document.text.trimmed().isEmpty())
        return makeError(quoted(path) + ": the file contains no text");
    return document;
}

} // namespace cw
