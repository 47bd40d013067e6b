#include "app/redline/docx_package.h"

#include <QBuffer>
#include <QFile>
#include <QSaveFile>
#include <quazip.h>
#include <quazipfile.h>
#include <quazipnewinfo.h>
#include <zlib.h>

namespace cw::redline {

Result<DocxPackage> DocxPackage::read(const QString& path, qint64 maxBytes, int maxEntries)
{
    const std::string name = "'" + path.toStdString() + "'";
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(name + ": cannot open (" + file.errorString().toStdString() + ")");
    return fromBytes(file.readAll(), path, maxBytes, maxEntries);
}

Result<DocxPackage> DocxPackage::fromBytes(
    QByteArray bytes, const QString& path, qint64 maxBytes, int maxEntries)
{
    const std::string name = "'" + path.toStdString() + "'";
    QBuffer buffer(&bytes);
    QuaZip zip(&buffer);
    if (!zip.open(QuaZip::mdUnzip))
        return makeError(name + ": not a DOCX file (not a readable ZIP archive)");
    const int entries = zip.getEntriesCount();
    if (entries < 0 || entries > maxEntries)
        return makeError(name + ": the archive lists " + std::to_string(entries)
            + " entries (at most " + std::to_string(maxEntries) + "); refusing it");
    DocxPackage package;
    qint64 total = 0;
    for (bool more = zip.goToFirstFile(); more; more = zip.goToNextFile()) {
        const QString part = zip.getCurrentFileName();
        QuaZipFile entry(&zip);
        if (!entry.open(QIODevice::ReadOnly))
            return makeError(name + ": the part " + part.toStdString()
                + " cannot be opened (damaged or encrypted archive)");
        QByteArray data;
        char chunk[65536];
        for (;;) {
            const qint64 got = entry.read(chunk, sizeof chunk);
            if (got < 0)
                return makeError(name + ": the part " + part.toStdString() + " is damaged");
            if (got == 0)
                break;
            total += got;
            if (total > maxBytes)
                return makeError(name + ": the archive expands to more than "
                    + std::to_string(maxBytes) + " bytes; refusing it (a zip bomb?)");
            data.append(chunk, got);
        }
        entry.close();
        if (entry.getZipError() != 0)
            return makeError(name + ": the part " + part.toStdString()
                + " fails its checksum (damaged archive)");
        package.m_parts.append({ part, std::move(data) });
    }
    if (zip.getZipError() != 0)
        return makeError(name + ": the archive's directory is damaged");
    return package;
}

bool DocxPackage::contains(const QString& part) const
{
    for (const auto& [name, bytes] : m_parts) {
        if (name == part)
            return true;
    }
    return false;
}

QByteArray DocxPackage::part(const QString& part) const
{
    for (const auto& [name, bytes] : m_parts) {
        if (name == part)
            return bytes;
    }
    return {};
}

void DocxPackage::setPart(const QString& part, const QByteArray& bytes)
{
    for (auto& [name, old] : m_parts) {
        if (name == part) {
            old = bytes;
            return;
        }
    }
    m_parts.append({ part, bytes });
}

Result<void> DocxPackage::write(const QString& path) const
{
    const std::string name = "'" + path.toStdString() + "'";
    auto bytes = archive();
    if (!bytes)
        return makeError(name + ": " + bytes.error().message);
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return makeError(name + ": cannot write (" + out.errorString().toStdString() + ")");
    out.write(*bytes);
    if (!out.commit())
        return makeError(name + ": cannot write (" + out.errorString().toStdString() + ")");
    return {};
}

Result<QByteArray> DocxPackage::archive() const
{
    QByteArray archive;
    {
        QBuffer buffer(&archive);
        QuaZip zip(&buffer);
        if (!zip.open(QuaZip::mdCreate))
            return makeError("cannot start the ZIP archive");
        for (const auto& [part, bytes] : m_parts) {
            QuaZipFile entry(&zip);
            if (!entry.open(QIODevice::WriteOnly, QuaZipNewInfo(part), nullptr, 0, Z_DEFLATED,
                    Z_DEFAULT_COMPRESSION))
                return makeError("cannot add the part " + part.toStdString());
            if (entry.write(bytes) != bytes.size())
                return makeError("cannot write the part " + part.toStdString());
            entry.close();
            if (entry.getZipError() != 0)
                return makeError("cannot write the part " + part.toStdString());
        }
        zip.close();
        if (zip.getZipError() != 0)
            return makeError("cannot finish the ZIP archive");
    }
    return archive;
}

} // namespace cw::redline
