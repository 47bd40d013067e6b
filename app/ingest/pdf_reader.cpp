// PDF ingest through Poppler-Qt6: words with boxes per page -> lines -> document text.
#include "app/ingest/document_reader.h"
#include "app/ingest/page_layout.h"
#include "app/ingest/pdf_passwords.h"
#include "app/ingest/poppler_threads.h"
#include "app/ingest/text_assembler.h"

#include <QCryptographicHash>
#include <QImage>
#include <QLoggingCategory>
#include <atomic>
#include <memory>
#include <mutex>
#include <poppler-qt6.h>
#include <thread>
#include <vector>

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

constexpr int kParallelPages = 8; // below this a second thread costs more than it saves

struct PageResult {
    ingest::LayoutPage page;
    bool scanned = false; // no text layer, but ink: an image of text
    bool damaged = false;
};

PageResult readPageAt(Poppler::Document* pdf, int index)
{
    PageResult result;
    std::unique_ptr<Poppler::Page> page = pdf ? pdf->page(index) : nullptr;
    if (!page) {
        result.page.number = index + 1;
        result.page.hasTextLayer = false;
        result.damaged = true;
        return result;
    }
    result.page = readPage(*page, index + 1);
    result.scanned = !result.page.hasTextLayer && pageHasInk(*page);
    return result;
}

} // namespace

Result<Document> readPdfBytes(
    const QByteArray& bytes, const QString& name, const ReadOptions& options)
{
    static std::once_flag quietPoppler;
    std::call_once(quietPoppler, [] { Poppler::setDebugErrorFunction(routePopplerMessage, {}); });
    preparePopplerForThreads();

    if (bytes.isEmpty())
        return makeError(quoted(name) + ": the file is empty (0 bytes), not a PDF");
    std::unique_ptr<Poppler::Document> pdf = Poppler::Document::loadFromData(bytes);
    if (!pdf)
        return makeError(
            quoted(name) + ": not a readable PDF (damaged, truncated or another format)");
    const QString password
        = options.password.isEmpty() ? PdfPasswords::lookup(name) : options.password;
    if (pdf->isLocked()) {
        if (password.isEmpty())
            return makeError(
                quoted(name) + ": the PDF is password protected; give its password to open it");
        if (!unlockPdf(*pdf, password))
            return makeError(quoted(name) + ": the password does not open this PDF");
    }
    const int pageCount = pdf->numPages();
    if (pageCount <= 0)
        return makeError(quoted(name) + ": the PDF has no pages (damaged or truncated?)");

    Document document;
    document.path = name;
    document.format = DocumentFormat::Pdf;
    document.sha256
        = QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());

    // Pages are independent: the second half is read on a second thread from its own
    // Poppler document (a Poppler document is not shared between threads), the first half
    // here, so progress and page 1 come from this thread.
    std::vector<PageResult> results { std::size_t(pageCount) };
    std::atomic<bool> cancelled = false;
    const int split = pageCount >= kParallelPages ? (pageCount + 1) / 2 : pageCount;
    std::thread worker;
    if (split < pageCount) {
        worker = std::thread([&bytes, &results, &cancelled, &password, split, pageCount] {
            std::unique_ptr<Poppler::Document> second = Poppler::Document::loadFromData(bytes);
            if (second && second->isLocked() && !unlockPdf(*second, password))
                second.reset(); // cannot happen: the same password opened the first copy
            for (int i = split; i < pageCount && !cancelled; ++i)
                results[std::size_t(i)] = readPageAt(second.get(), i);
        });
    }
    for (int i = 0; i < split; ++i) {
        results[std::size_t(i)] = readPageAt(pdf.get(), i);
        if (options.progress && !options.progress(i + 1, pageCount)) {
            cancelled = true;
            break;
        }
    }
    if (worker.joinable())
        worker.join();
    if (cancelled)
        return makeError(quoted(name) + ": reading cancelled");
    if (options.progress && split < pageCount && !options.progress(pageCount, pageCount))
        return makeError(quoted(name) + ": reading cancelled");
    QList<ingest::LayoutPage> pages;
    pages.reserve(pageCount);
    QList<int> scanned;
    for (PageResult& result : results) {
        if (result.damaged)
            document.warnings.append(
                QStringLiteral("page %1 could not be read (damaged page)").arg(result.page.number));
        if (result.scanned)
            scanned.append(result.page.number);
        pages.append(std::move(result.page));
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
