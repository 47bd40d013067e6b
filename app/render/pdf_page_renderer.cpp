#include "app/render/pdf_page_renderer.h"

#include "app/ingest/pdf_passwords.h"
#include "app/ingest/poppler_threads.h"

#include <QFileInfo>
#include <QMutexLocker>
#include <QtConcurrent/QtConcurrentRun>
#include <poppler-qt6.h>

namespace cw {

PdfPageRenderer::PdfPageRenderer(QObject* parent, int cacheKilobytes)
    : QObject(parent)
    , m_documentMutex(std::make_shared<QMutex>())
    , m_cache(cacheKilobytes)
    , m_pool(this) // children, so that moveToThread() takes them along
    , m_textPool(this)
{
    m_pool.setMaxThreadCount(2);
    m_textPool.setMaxThreadCount(1);
    preparePopplerForThreads(); // before the first render on a pool thread
}

PdfPageRenderer::~PdfPageRenderer()
{
    {
        QMutexLocker lock(&m_cacheMutex);
        ++m_generation; // queued renders return at once
    }
    m_pool.clear();
    m_pool.waitForDone();
    m_textPool.waitForDone();
}

bool PdfPageRenderer::needsPassword(const QString& path)
{
    return pdfLockState(path) == PdfLock::NeedsPassword;
}

Result<void> PdfPageRenderer::open(const QString& path, const QByteArray& password)
{
    const QFileInfo info(path);
    if (!info.exists())
        return makeError(QStringLiteral("%1: no such file").arg(path).toStdString());
    if (!info.isReadable())
        return makeError(QStringLiteral("%1: permission denied").arg(path).toStdString());
    std::unique_ptr<Poppler::Document> document = Poppler::Document::load(path);
    if (!document)
        return makeError(QStringLiteral("%1: not a readable PDF (corrupt or not a PDF)")
                             .arg(path)
                             .toStdString());
    const QString given
        = password.isEmpty() ? PdfPasswords::lookup(path) : QString::fromUtf8(password);
    if (document->isLocked() && (given.isEmpty() || !unlockPdf(*document, given)))
        return makeError(QStringLiteral("%1: the PDF is password protected; open it again and give "
                                        "its password to see its pages")
                             .arg(path)
                             .toStdString());
    document->setRenderHint(Poppler::Document::Antialiasing, true);
    document->setRenderHint(Poppler::Document::TextAntialiasing, true);

    QList<QSizeF> sizes;
    for (int i = 0; i < document->numPages(); ++i) {
        std::unique_ptr<Poppler::Page> page = document->page(i);
        sizes.append(page ? page->pageSizeF() : QSizeF(612, 792));
    }
    QMutexLocker lock(&m_cacheMutex);
    ++m_generation;
    m_cache.clear();
    m_oversized.reset();
    m_pending.clear();
    m_documentMutex = std::make_shared<QMutex>();
    m_document = std::shared_ptr<Poppler::Document>(document.release());
    m_pageSizes = sizes;
    m_path = path;
    return {};
}

QSizeF PdfPageRenderer::pageSizePt(int page) const
{
    return page >= 0 && page < m_pageSizes.size() ? m_pageSizes[page] : QSizeF();
}

QImage PdfPageRenderer::page(int pageIndex, double dpi)
{
    if (!m_document || pageIndex < 0 || pageIndex >= pageCount())
        return {};
    const Key key { pageIndex, qMax(18, int(dpi / 6.0 + 0.5) * 6) };
    QMutexLocker lock(&m_cacheMutex);
    if (const QImage* cached = m_cache.object(key))
        return *cached;
    if (m_oversized && m_oversized->first == key)
        return m_oversized->second;
    if (!m_pending.contains(key)) {
        m_pending.insert(key);
        const quint64 generation = m_generation;
        m_pool.start([this, key, generation] { render(key.page, key.dpi, generation); });
    }
    return {};
}

void PdfPageRenderer::render(int pageIndex, int dpi, quint64 generation)
{
    std::shared_ptr<Poppler::Document> document;
    std::shared_ptr<QMutex> documentMutex;
    {
        QMutexLocker lock(&m_cacheMutex);
        if (generation != m_generation)
            return;
        document = m_document;
        documentMutex = m_documentMutex;
    }
    QImage image;
    {
        QMutexLocker lock(documentMutex.get());
        std::unique_ptr<Poppler::Page> page = document->page(pageIndex);
        if (page)
            image = page->renderToImage(dpi, dpi);
    }
    {
        QMutexLocker lock(&m_cacheMutex);
        if (generation != m_generation)
            return;
        m_pending.remove(Key { pageIndex, dpi });
        if (image.isNull())
            image = QImage(1, 1, QImage::Format_RGB32); // unrenderable page: cache a blank
        const qsizetype kilobytes = qMax<qsizetype>(1, image.sizeInBytes() / 1024);
        if (kilobytes > m_cache.maxCost())
            m_oversized = std::make_pair(Key { pageIndex, dpi }, image);
        else
            m_cache.insert(Key { pageIndex, dpi }, new QImage(image), kilobytes);
    }
    QMetaObject::invokeMethod(
        this, [this, pageIndex, dpi] { emit pageRendered(pageIndex, dpi); }, Qt::QueuedConnection);
}

QString PdfPageRenderer::textIn(int pageIndex, const QRectF& rectPt) const
{
    if (!m_document || pageIndex < 0 || pageIndex >= pageCount())
        return {};
    QMutexLocker lock(m_documentMutex.get());
    std::unique_ptr<Poppler::Page> page = m_document->page(pageIndex);
    return page ? page->text(rectPt) : QString();
}

QFuture<QString> PdfPageRenderer::textInAsync(const QList<QPair<int, QRectF>>& pieces) const
{
    std::shared_ptr<Poppler::Document> document = m_document;
    std::shared_ptr<QMutex> documentMutex = m_documentMutex;
    const int pages = pageCount();
    return QtConcurrent::run(&m_textPool, [document, documentMutex, pages, pieces] {
        QStringList parts;
        if (!document)
            return QString();
        QMutexLocker lock(documentMutex.get());
        for (const auto& [pageIndex, rect] : pieces) {
            if (pageIndex < 0 || pageIndex >= pages)
                continue;
            std::unique_ptr<Poppler::Page> page = document->page(pageIndex);
            const QString text = page ? page->text(rect).trimmed() : QString();
            if (!text.isEmpty())
                parts.append(text);
        }
        return parts.join(QLatin1Char('\n'));
    });
}

std::unique_ptr<QMutexLocker<QMutex>> PdfPageRenderer::holdDocumentForTesting() const
{
    return std::make_unique<QMutexLocker<QMutex>>(m_documentMutex.get());
}

} // namespace cw
