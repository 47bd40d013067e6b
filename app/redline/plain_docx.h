#pragma once

#include "app/redline/docx_package.h"
#include "app/redline/tracked_changes.h"

#include <QString>

namespace cw::redline {

// A plain DOCX of a PDF's or a text file's extracted text, for its redline: one paragraph per
// block of lines (blocks end at blank lines and at control characters XML cannot hold), the
// lines of a block kept apart by line breaks, tabs as tabs. `paragraphs` are the blocks'
// [start, end) in `text`, for applyTrackedChanges.
struct PlainDocx {
    DocxPackage package;
    ParagraphLines paragraphs;
};

PlainDocx plainDocx(const QString& text);

} // namespace cw::redline
