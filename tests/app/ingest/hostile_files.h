// Hostile input files made at test time (too big to commit): a DOCX that is a ZIP bomb and a
// sparse "PDF" of any size. Shared by the reader, CLI and main-window tests.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>
#include <quazip.h>
#include <quazipfile.h>

namespace cw::testing {

// A DOCX whose word/document.xml inflates to `megabytes` MB of spaces (about 1000:1).
inline bool writeZipBomb(const QString& path, int megabytes)
{
    QuaZip zip(path);
    if (!zip.open(QuaZip::mdCreate))
        return false;
    const auto add = [&zip](const QString& name, const QByteArray& head, int megabytes) {
        QuaZipFile file(&zip);
        if (!file.open(QIODevice::WriteOnly, QuaZipNewInfo(name), nullptr, 0, Z_DEFLATED, 9))
            return false;
        file.write(head);
        const QByteArray chunk(1 << 20, ' ');
        for (int i = 0; i < megabytes; ++i)
            file.write(chunk);
        file.close();
        return file.getZipError() == ZIP_OK;
    };
    const bool ok = add(QStringLiteral("[Content_Types].xml"),
                        "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/"
                        "package/2006/content-types\"/>",
                        0)
        && add(QStringLiteral("word/document.xml"),
            "<?xml version=\"1.0\"?><w:document xmlns:w=\"http://schemas.openxmlformats.org/"
            "wordprocessingml/2006/main\"><w:body><w:p><w:r><w:t>",
            megabytes);
    zip.close();
    return ok && zip.getZipError() == ZIP_OK;
}

// A file of `bytes` bytes that starts like a PDF; sparse, so it costs no disk space.
inline bool writeHugePdf(const QString& path, qint64 bytes)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write("%PDF-1.7\n");
    return file.resize(bytes);
}

} // namespace cw::testing
