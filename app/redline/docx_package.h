#pragma once

#include "engine/common/result.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace cw::redline {

// The parts of an Office package (a ZIP archive), in the archive's order, so that a rewritten
// package keeps [Content_Types].xml first and every part it does not touch byte for byte.
class DocxPackage {
public:
    // Reads every part of `path`, refusing archives over the caps (a zip bomb) the same way
    // DOCX ingest does; errors name the file and the part.
    static Result<DocxPackage> read(
        const QString& path, qint64 maxBytes = 512LL << 20, int maxEntries = 10000);
    // The same from the archive's bytes; `name` is the file named in errors.
    static Result<DocxPackage> fromBytes(QByteArray bytes, const QString& name,
        qint64 maxBytes = 512LL << 20, int maxEntries = 10000);

    bool contains(const QString& part) const;
    QByteArray part(const QString& part) const; // empty when absent
    // Replaces the part, or adds it at the end.
    void setPart(const QString& part, const QByteArray& bytes);
    const QList<QPair<QString, QByteArray>>& parts() const { return m_parts; }

    // Writes the archive (deflated) to `path` through a temporary file, so a failed write
    // leaves no half file behind.
    Result<void> write(const QString& path) const;
    Result<QByteArray> archive() const;

private:
    QList<QPair<QString, QByteArray>> m_parts;
};

} // namespace cw::redline
