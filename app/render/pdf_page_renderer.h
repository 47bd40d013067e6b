#pragma once

#include "engine/common/result.h"

#include <QCache>
#include <QImage>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QSizeF>
#include <QThreadPool>
#include <memory>

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
    explicit PdfPageRenderer(QObject* parent = nullptr);
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
    QImage page(int page, double dpi);
    // Plain text inside a rectangle of page points (for copying a selection).
    QString textIn(int page, const QRectF& rectPt) const;

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
    QSet<Key> m_pending;
    quint64 m_generation = 0; // bumped on open(): late renders of an old file are dropped
    QThreadPool m_pool; // own pool: the destructor waits for its renders, so none outlives us
};

} // namespace cw
