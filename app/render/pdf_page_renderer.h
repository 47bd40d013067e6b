#pragma once

#include "engine/common/result.h"

#include <QCache>
#include <QFuture>
#include <QImage>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QSizeF>
#include <QThreadPool>
#include <memory>
#include <optional>
#include <utility>

namespace Poppler {
class Document;
}

namespace cw {

// Renders pages of one PDF to images on a worker pool and keeps the recent ones in a
// cache, so the viewer scrolls without the UI thread ever waiting for Poppler. The Poppler
// document is shared by the workers behind a mutex, as Okular does.
class PdfPageRenderer : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultCacheKilobytes = 256 * 1024; // ~ 30 pages at 150 dpi
    explicit PdfPageRenderer(
        QObject* parent = nullptr, int cacheKilobytes = kDefaultCacheKilobytes);
    ~PdfPageRenderer() override;

    // Opens the file; an encrypted file needs its password (empty: the one the user gave for
    // it in this session, see PdfPasswords).
    Result<void> open(const QString& path, const QByteArray& password = {});
    bool isOpen() const { return m_document != nullptr; }
    QString path() const { return m_path; } // of the open file
    static bool needsPassword(const QString& path);

    int pageCount() const { return int(m_pageSizes.size()); }
    QSizeF pageSizePt(int page) const; // 0-based page, PDF points

    // The cached image if there is one; otherwise queues a render and returns a null
    // image; pageRendered() follows. `dpi` is rounded so nearby zooms share a cache entry.
    // An image larger than the whole cache (zoom 6 on a device-pixel-ratio-2 screen) is kept
    // aside, the latest one only, so that it is shown rather than rendered again forever.
    QImage page(int page, double dpi);
    // Plain text inside a rectangle of page points (for copying a selection). Blocks while a
    // page renders: not for the UI thread.
    QString textIn(int page, const QRectF& rectPt) const;
    // The same for several (page, rectangle) pieces, joined by newlines, on a worker: the UI
    // thread never waits for the document mutex a render holds.
    QFuture<QString> textInAsync(const QList<QPair<int, QRectF>>& pieces) const;
    // Tests: holds the Poppler document's mutex as a long render would, until released.
    std::unique_ptr<QMutexLocker<QMutex>> holdDocumentForTesting() const;

signals:
    void pageRendered(int page, double dpi);

private:
    struct Key {
        int page;
        int dpi;
        bool operator==(const Key&) const = default;
    };
    friend size_t qHash(const Key& key, size_t seed) { return qHashMulti(seed, key.page, key.dpi); }

    void render(int page, int dpi, quint64 generation);

    std::shared_ptr<Poppler::Document> m_document;
    std::shared_ptr<QMutex> m_documentMutex;
    QList<QSizeF> m_pageSizes;
    QString m_path;
    QMutex m_cacheMutex;
    QCache<Key, QImage> m_cache; // cost in kilobytes
    std::optional<std::pair<Key, QImage>> m_oversized; // the latest image too big for m_cache
    QSet<Key> m_pending;
    quint64 m_generation = 0; // bumped on open(): late renders of an old file are dropped
    QThreadPool m_pool; // own pool: the destructor waits for its renders, so none outlives us
    mutable QThreadPool m_textPool; // text for selections, apart from the renders
};

} // namespace cw
