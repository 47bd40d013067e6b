#pragma once

#include <QAbstractScrollArea>
#include <QList>
#include <QPair>
#include <QRectF>
#include <QSet>

namespace cw {
class PdfPageRenderer;
}

namespace cw::ui {

// Continuous-scroll PDF viewer: pages stacked vertically, rendered off the UI thread by
// PdfPageRenderer and drawn from its cache. Shows highlight boxes (page points) for the
// selected clause and lets the user drag a rectangle to select and copy text.
class PdfView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit PdfView(QWidget* parent = nullptr);

    void setRenderer(cw::PdfPageRenderer* renderer); // not owned; nullptr clears the view
    cw::PdfPageRenderer* renderer() const { return m_renderer; }
    double pixelsPerPoint() const; // zoom × screen dpi / 72
    // The resolution pages are rendered at: one image pixel per device pixel, so pages stay
    // sharp on high-DPI screens (QT_SCALE_FACTOR=2, a 4K panel at 200 %).
    double renderDpi() const;
    double zoom() const { return m_zoom; }
    int currentPage() const; // 0-based page at the top of the viewport

    // Highlights as (1-based page, rectangle in page points); scrolls to the first one.
    void setHighlights(const QList<QPair<int, QRectF>>& boxes);
    const QList<QPair<int, QRectF>>& highlights() const { return m_highlights; }
    QString selectedText() const { return m_selectedText; } // see selectedTextChanged()

public slots:
    void setZoom(double zoom);
    void zoomIn() { setZoom(m_zoom * 1.25); }
    void zoomOut() { setZoom(m_zoom / 1.25); }
    void fitWidth(); // and keep fitting it as the view resizes, until the user zooms
    void goToPage(int page); // 0-based
    void nextPage() { goToPage(currentPage() + 1); }
    void previousPage() { goToPage(currentPage() - 1); }
    void copySelection();

signals:
    void currentPageChanged(int page);
    // selectedText() has the text of the latest selection (read on a worker).
    void selectedTextChanged();
    // A page's rendered image was painted for the first time since setRenderer() (0-based).
    void pageShown(int page);
    void zoomChanged(double zoom);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    void relayout();
    void applyZoom(double zoom);
    double fitWidthZoom() const; // 0 when there is nothing to fit
    QRectF pageRect(int page) const; // in content pixels
    int pageAt(const QPointF& contentPos) const;
    QPointF toContent(const QPointF& viewportPos) const;

    cw::PdfPageRenderer* m_renderer = nullptr;
    QList<double> m_pageTops; // content-pixel y of each page
    double m_contentWidth = 0;
    double m_contentHeight = 0;
    double m_zoom = 1.0;
    bool m_fitToWidth = true; // a document opens fitted to the view's width
    QList<QPair<int, QRectF>> m_highlights;
    int m_lastReportedPage = -1;
    QSet<int> m_shownPages;
    // Rubber-band selection in content pixels.
    bool m_selecting = false;
    QPointF m_selectionStart;
    QRectF m_selection;
    QString m_selectedText;
    quint64 m_selectionGeneration = 0; // the latest selection's text is the one kept
};

} // namespace cw::ui
