#include "ui/pdf_view.h"

#include "app/render/pdf_page_renderer.h"

#include <QApplication>
#include <QClipboard>
#include <QFutureWatcher>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>

namespace cw::ui {

namespace {
constexpr double kPageGap = 12.0;
constexpr double kMinZoom = 0.25;
constexpr double kMaxZoom = 6.0;
} // namespace

PdfView::PdfView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setObjectName(QStringLiteral("pdfView"));
    setAccessibleName(tr("Contract pages"));
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setBackgroundRole(QPalette::Dark);
    viewport()->setAutoFillBackground(true);
    viewport()->setCursor(Qt::IBeamCursor);
    // Always there, so fitting the width never makes it come and go (and the width change).
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
}

void PdfView::setRenderer(cw::PdfPageRenderer* renderer)
{
    if (m_renderer)
        disconnect(m_renderer, nullptr, this, nullptr);
    m_renderer = renderer;
    m_highlights.clear();
    m_selection = {};
    m_selectedText.clear();
    m_shownPages.clear();
    if (m_renderer)
        connect(m_renderer, &cw::PdfPageRenderer::pageRendered, viewport(),
            qOverload<>(&QWidget::update));
    relayout();
    if (m_fitToWidth)
        fitWidth();
    verticalScrollBar()->setValue(0);
    viewport()->update();
}

double PdfView::pixelsPerPoint() const
{
    return m_zoom * logicalDpiY() / 72.0;
}

double PdfView::renderDpi() const
{
    return 72.0 * pixelsPerPoint() * devicePixelRatioF();
}

void PdfView::relayout()
{
    m_pageTops.clear();
    m_contentWidth = 0;
    double y = kPageGap;
    const int pages = m_renderer ? m_renderer->pageCount() : 0;
    for (int i = 0; i < pages; ++i) {
        const QSizeF size = m_renderer->pageSizePt(i) * pixelsPerPoint();
        m_pageTops.append(y);
        y += size.height() + kPageGap;
        m_contentWidth = std::max(m_contentWidth, size.width() + 2 * kPageGap);
    }
    m_contentHeight = y;
    const QSize view = viewport()->size();
    verticalScrollBar()->setRange(0, std::max(0, int(m_contentHeight) - view.height()));
    verticalScrollBar()->setPageStep(view.height());
    verticalScrollBar()->setSingleStep(40);
    horizontalScrollBar()->setRange(0, std::max(0, int(m_contentWidth) - view.width()));
    horizontalScrollBar()->setPageStep(view.width());
}

QRectF PdfView::pageRect(int page) const
{
    if (!m_renderer || page < 0 || page >= m_pageTops.size())
        return {};
    const QSizeF size = m_renderer->pageSizePt(page) * pixelsPerPoint();
    const double x = std::max(
        kPageGap, (std::max(m_contentWidth, double(viewport()->width())) - size.width()) / 2);
    return QRectF(QPointF(x, m_pageTops[page]), size);
}

int PdfView::pageAt(const QPointF& contentPos) const
{
    for (int i = int(m_pageTops.size()) - 1; i >= 0; --i) {
        if (contentPos.y() >= m_pageTops[i])
            return i;
    }
    return m_pageTops.isEmpty() ? -1 : 0;
}

QPointF PdfView::toContent(const QPointF& viewportPos) const
{
    return viewportPos + QPointF(horizontalScrollBar()->value(), verticalScrollBar()->value());
}

int PdfView::currentPage() const
{
    return std::max(0, pageAt(toContent(QPointF(0, viewport()->height() / 3.0))));
}

void PdfView::setZoom(double zoom)
{
    m_fitToWidth = false;
    applyZoom(zoom);
}

void PdfView::applyZoom(double zoom)
{
    zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
    if (qFuzzyCompare(zoom, m_zoom))
        return;
    const int page = currentPage();
    m_zoom = zoom;
    relayout();
    goToPage(page);
    emit zoomChanged(m_zoom);
}

void PdfView::fitWidth()
{
    m_fitToWidth = true;
    if (const double zoom = fitWidthZoom(); zoom > 0)
        applyZoom(zoom);
}

double PdfView::fitWidthZoom() const
{
    if (!m_renderer || m_renderer->pageCount() == 0 || viewport()->width() <= 2 * kPageGap)
        return 0;
    double widthPt = 0;
    for (int i = 0; i < m_renderer->pageCount(); ++i)
        widthPt = std::max(widthPt, m_renderer->pageSizePt(i).width());
    return (viewport()->width() - 2 * kPageGap) / (widthPt * logicalDpiY() / 72.0);
}

void PdfView::goToPage(int page)
{
    if (m_pageTops.isEmpty())
        return;
    page = std::clamp(page, 0, int(m_pageTops.size()) - 1);
    verticalScrollBar()->setValue(int(m_pageTops[page] - kPageGap));
}

void PdfView::setHighlights(const QList<QPair<int, QRectF>>& boxes)
{
    m_highlights = boxes;
    if (!boxes.isEmpty()) {
        const QRectF page = pageRect(boxes.first().first - 1);
        const QRectF box = boxes.first().second;
        const double y = page.top() + box.top() * pixelsPerPoint();
        // Put the clause a third of the way down the view so its context shows above it.
        if (y < verticalScrollBar()->value()
            || y > verticalScrollBar()->value() + viewport()->height() * 0.8)
            verticalScrollBar()->setValue(int(y - viewport()->height() / 3.0));
    }
    viewport()->update();
}

void PdfView::paintEvent(QPaintEvent*)
{
    QPainter painter(viewport());
    if (!m_renderer)
        return;
    const QPointF offset(horizontalScrollBar()->value(), verticalScrollBar()->value());
    const QRectF visible(offset, viewport()->size());
    const double dpi = renderDpi();
    for (int i = 0; i < m_pageTops.size(); ++i) {
        const QRectF rect = pageRect(i);
        if (!rect.intersects(visible))
            continue;
        const QRectF target = rect.translated(-offset);
        const QImage image = m_renderer->page(i, dpi);
        painter.fillRect(target, Qt::white);
        if (!image.isNull()) {
            // The cache rounds the resolution, so the image is a few percent off the target's
            // device pixels: resample smoothly rather than drop or double pixel rows.
            painter.setRenderHint(QPainter::SmoothPixmapTransform,
                std::abs(image.width() - target.width() * devicePixelRatioF()) > 0.5);
            painter.drawImage(target, image);
            if (!m_shownPages.contains(i)) {
                m_shownPages.insert(i);
                QMetaObject::invokeMethod(
                    this, [this, i] { emit pageShown(i); }, Qt::QueuedConnection);
            }
        }
        painter.setPen(QPen(palette().color(QPalette::Mid), 1));
        painter.drawRect(target);
        for (const auto& [page, box] : m_highlights) {
            if (page - 1 != i)
                continue;
            const QRectF area(
                target.topLeft() + box.topLeft() * pixelsPerPoint(), box.size() * pixelsPerPoint());
            painter.fillRect(area.adjusted(-2, -1, 2, 1), QColor(255, 200, 0, 90));
        }
    }
    if (!m_selection.isEmpty()) {
        painter.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
        painter.fillRect(m_selection.translated(-offset), QColor(60, 120, 220, 50));
        painter.drawRect(m_selection.translated(-offset));
    }
    const int page = currentPage();
    if (page != m_lastReportedPage) {
        m_lastReportedPage = page;
        QMetaObject::invokeMethod(
            this, [this, page] { emit currentPageChanged(page); }, Qt::QueuedConnection);
    }
}

void PdfView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    relayout();
    if (m_fitToWidth)
        fitWidth();
}

void PdfView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void PdfView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return;
    m_selecting = true;
    m_selectionStart = toContent(event->position());
    m_selection = {};
    viewport()->update();
}

void PdfView::mouseMoveEvent(QMouseEvent* event)
{
    if (!m_selecting)
        return;
    m_selection = QRectF(m_selectionStart, toContent(event->position())).normalized();
    viewport()->update();
}

void PdfView::mouseReleaseEvent(QMouseEvent* event)
{
    if (!m_selecting || event->button() != Qt::LeftButton)
        return;
    m_selecting = false;
    m_selectedText.clear();
    if (!m_renderer || m_selection.width() < 3 || m_selection.height() < 3) {
        ++m_selectionGeneration; // a text still being read for an older selection is dropped
        m_selection = {};
        viewport()->update();
        return;
    }
    // Collect the text under the rectangle on every page it crosses, on the renderer's text
    // worker: a page being rendered holds the document, and the UI thread must not wait.
    QList<QPair<int, QRectF>> pieces;
    for (int i = 0; i < m_pageTops.size(); ++i) {
        const QRectF page = pageRect(i);
        const QRectF hit = page.intersected(m_selection);
        if (hit.isEmpty())
            continue;
        pieces.append({ i,
            QRectF((hit.topLeft() - page.topLeft()) / pixelsPerPoint(),
                hit.size() / pixelsPerPoint()) });
    }
    const quint64 selection = ++m_selectionGeneration;
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, selection] {
        watcher->deleteLater();
        if (selection != m_selectionGeneration)
            return; // a newer selection replaced this one
        m_selectedText = watcher->result();
        emit selectedTextChanged();
    });
    watcher->setFuture(m_renderer->textInAsync(pieces));
}

void PdfView::copySelection()
{
    if (!m_selectedText.isEmpty())
        QApplication::clipboard()->setText(m_selectedText);
}

void PdfView::keyPressEvent(QKeyEvent* event)
{
    if (event->matches(QKeySequence::Copy)) {
        copySelection();
        return;
    }
    switch (event->key()) {
    case Qt::Key_PageDown:
        nextPage();
        return;
    case Qt::Key_PageUp:
        previousPage();
        return;
    case Qt::Key_Home:
        goToPage(0);
        return;
    case Qt::Key_End:
        goToPage(int(m_pageTops.size()) - 1);
        return;
    default:
        QAbstractScrollArea::keyPressEvent(event);
    }
}

void PdfView::wheelEvent(QWheelEvent* event)
{
    if (event->modifiers() & Qt::ControlModifier) {
        if (event->angleDelta().y() > 0)
            zoomIn();
        else if (event->angleDelta().y() < 0)
            zoomOut();
        return;
    }
    QAbstractScrollArea::wheelEvent(event);
}

} // namespace cw::ui
