#pragma once

// The parts of a Document that are not searched (pages, laid-out lines, warnings), packed
// into one compressed blob for the documents table. Internal to app/history.
#include "app/review/review_types.h"

#include <QByteArray>
#include <optional>

namespace cw::history {

QByteArray encodeDocumentLayout(const Document& document);
// Fills pages, lines and warnings; nullopt when the blob is damaged (counts are checked
// against the blob's size before anything is allocated).
std::optional<Document> decodeDocumentLayout(const QByteArray& blob, Document document);

} // namespace cw::history
