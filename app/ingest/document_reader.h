#pragma once

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QByteArray>
#include <QString>
#include <functional>

namespace cw {

// Files larger than this are refused before any byte is read: a contract of a few hundred
// text pages is a few MB, and a file past this size is nearly always scanned images, which
// would take minutes and gigabytes of memory to read and still have no text layer.
constexpr qint64 kMaxDocumentBytes = qint64(200) * 1000 * 1000; // 200 MB

// Limits and switches for reading a contract. The defaults suit contracts of a few hundred
// pages; the caps keep hostile files (zip bombs, huge XML) from exhausting memory.
struct ReadOptions {
    // PDF: remove lines repeated at the top/bottom of most pages and page numbers.
    bool removeHeadersFooters = true;
    // PDF: join words hyphenated across line ends ("agree-\nment" -> "agreement").
    bool dehyphenate = true;
    // DOCX: at most this many bytes uncompressed for any part read, and in total.
    qint64 maxUncompressedBytes = qint64(200) * 1024 * 1024;
    // DOCX: at most this many entries in the ZIP directory.
    int maxZipEntries = 5000;
    // PDF: the password of an encrypted file. Empty: the one the user gave for this file in
    // this session (PdfPasswords), if any.
    QString password;
    // Called after each PDF page is read with (pagesDone, pageCount); return false to cancel
    // (readDocument then fails with "cancelled").
    std::function<bool(int, int)> progress;
};

// Reads a PDF (Poppler), DOCX (WordprocessingML) or plain-text file into one Document:
// cleaned text, pages, one TextLine per laid-out line with its span in Document::text and
// (for PDF) its box in page points, a title guess, the SHA-256 of the file bytes and
// warnings (e.g. pages without a text layer). The format is chosen from the file's first
// bytes, then its suffix. Every error message names the file.
Result<Document> readDocument(const QString& path, const ReadOptions& options = {});

// Reads a text file (UTF-8; UTF-16 with BOM) unchanged as the document text, so offsets
// refer to the file's characters (`--text-only`). Lines are the file's lines.
Result<Document> readText(const QString& path);

// The format readers, for callers that hold bytes already (tests, fuzzers). `name` is used
// in error messages and as Document::path.
Result<Document> readPdfBytes(
    const QByteArray& bytes, const QString& name, const ReadOptions& options = {});
Result<Document> readDocxBytes(
    const QByteArray& bytes, const QString& name, const ReadOptions& options = {});
// Plain text already decoded: the document text is `text` unchanged.
Document documentFromText(const QString& text, const QString& name = {});

} // namespace cw
