#pragma once

#include <QByteArray>
#include <QString>
#include <memory>

namespace Poppler {
class Document;
}

namespace cw {

// Whether a PDF can be opened as it is, needs its password, or cannot be read at all.
enum class PdfLock { Open, NeedsPassword, Unreadable };

// The lock state of the PDF at `path`; a file that is not a PDF (or not there) is Unreadable.
// Cheap: Poppler reads the trailer and the encryption dictionary, not the pages.
PdfLock pdfLockState(const QString& path);

// True when `password` opens the PDF at `path` (user or owner password).
bool pdfPasswordOpens(const QString& path, const QString& password);

// Tries `password` on a locked Poppler document (as UTF-8, then as Latin-1: PDF 2.0 / AES-256
// passwords are UTF-8, older RC4/AES-128 ones Latin-1). True when the document is unlocked.
bool unlockPdf(Poppler::Document& document, const QString& password);

// The passwords the user typed in this session, by file, so that the review (on its worker
// thread) and the page renderer can both open the file without asking twice. In memory only:
// never written to disk, settings or the history.
class PdfPasswords {
public:
    static void remember(const QString& path, const QString& password);
    static QString lookup(const QString& path); // empty when none was given
    static void forget(const QString& path);
};

} // namespace cw
