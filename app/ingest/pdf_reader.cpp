// PDF ingest through Poppler-Qt6: words with boxes per page -> lines -> document text.
#include "app/ingest/document_reader.h"
#include "app/ingest/page_layout.h"
#include "app/ingest/text_assembler.h"

#include <QCryptographicHash>
#include <QImage>
#include <QLoggingCategory>
#include <memory>
#include <mutex>
#include <poppler-qt6.h>

Q_LOGGING_CATEGORY(lcPoppler, "cw.ingest.poppler", QtWarningMsg)

namespace cw {

namespace {

void routePopplerMessage(const QString& message, const QVariant&)
{
    qCDebug(lcPoppler) << message;
}

std::string quoted(const QString& name)
{
    return "'" + name.toStdString() + "'";
}

// A page without a text layer is a scan when it shows anything at all.
bool pageHasInk(const Poppler::Page& page)
{
    const QImage image = page.renderToImage(18.0, 18.0);
    if (image.isNull())
        return false;
    const QImage gray = image.convertToFormat(QImage::Format_Grayscale8);
    for (int y = 0; y < gray.height(); ++y) {
        const uchar* row = gray.constScanLine(y);
        for (int x = 0; x < gray.width(); ++x) {
            if (row[x] < 200)
                return true;
        }
    }
    return false;
}

ingest::LayoutPage readPage(const Poppler::Page& page, int number)
{
    ingest::LayoutPage out;
    out.number = number;
    out.size = page.pageSizeF();
    QList<ingest::LaidWord> words;
    const std::vector<std::unique_ptr<Poppler::TextBox>> boxes = page.textList();
    words.reserve(qsizetype(boxes.size()));
    const Poppler::TextBox* previous = nullptr;
    for (const auto& box : boxes) {
        ingest::LaidWord word;
        word.text = box->text();
        word.box = box->boundingBox();
        word.spaceAfter = box->hasSpaceAfter();
        word.continuesRun = previous && previous->nextWord() == box.get();
        words.append(word);
        previous = box.get();
    }
    out.lines = ingest::layoutLines(words, out.size);
    out.hasTextLayer = !out.lines.isEmpty();
    return out;
}

} // namespace

Result<Document> readPdfBytes(
    const QByteArray& bytes, const QString& name, const ReadOptions& options)
{
    static std::once_flag quietPoppler;
    std::call_once(quietPoppler, [] { Poppler::setDebugErrorFunction(routePopplerMessage, {}); });

    if (bytes.isEmpty())
        return makeError(quoted(name) + ": the file is empty (0 bytes), not a PDF");
    std::unique_ptr<Poppler::Document> pdf = Poppler::Document::loadFromData(bytes);
    if (!pdf)
        return makeError(
            quoted(name) + ": not a readable PDF (damaged, truncated or another format)");
    if (pdf->isLocked())
        return makeError(quoted(name)
            + ": the PDF is password protected; open it with its password and save "
              "an unprotected copy first");
    const int pageCount = pdf->numPages();
    if (pageCount <= 0)
        return makeError(quoted(name) + ": the PDF has no pages (damaged or truncated?)");

    Document document;
    document.path = name;
    document.format = DocumentFormat::Pdf;
    document.sha256
        = QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());

    QList<ingest::LayoutPage> pages;
    pages.reserve(pageCount);
    QList<int> scanned;
    for (int i = 0; i < pageCount; ++i) {
        std::unique_ptr<Poppler::Page> page = pdf->page(i);
        ingest::LayoutPage laid;
        if (page) {
            laid = readPage(*page, i + 1);
            if (!laid.hasTextLayer && pageHasInk(*page))
                scanned.append(i + 1);
        } else {
            laid.number = i + 1;
            laid.hasTextLayer = false;
            document.warnings.append(
                QStringLiteral("page %1 could not be read (damaged page)").arg(i + 1));
        }
        pages.append(std::move(laid));
        if (options.progress && !options.progress(i + 1, pageCount))
            return makeError(quoted(name) + ": reading cancelled");
    }
    if (scanned.size() == pageCount)
        return makeError(quoted(name) + ": no page has a text layer (" + std::to_string(pageCount)
            + " scanned image page" + (pageCount == 1 ? "" : "s")
            + "); run OCR on it first (e.g. ocrmypdf) and open the result");
    for (int number : scanned)
        document.warnings.append(
            QStringLiteral("page %1 has no text layer (a scanned image?): run OCR first")
                .arg(number));

    ingest::assembleText(pages, { options.removeHeadersFooters, options.dehyphenate }, document);
    if (document.text.trimmed().isEmpty())
        return makeError(quoted(name) + ": the PDF contains no text");
    document.title = ingest::guessTitle(document.text);
    return document;
}

} // namespace cw
