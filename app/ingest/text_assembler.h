#pragma once

#include "app/ingest/page_layout.h"
#include "app/review/review_types.h"

namespace cw::ingest {

struct AssembleOptions {
    bool removeHeadersFooters = true;
    bool dehyphenate = true;
};

// Turns laid-out pages into the document text: drops running headers/footers (lines
// repeated at the top or bottom of many pages, EDGAR "Source:" lines) and page numbers,
// joins the lines of a paragraph with spaces (rejoining words hyphenated across a line
// end), separates paragraphs by a blank line, and records one TextLine per kept line with
// its span in the text. Fills text, lines and pages of `document`.
void assembleText(
    const QList<LayoutPage>& pages, const AssembleOptions& options, Document& document);

// True for a line that is only a page number: "3", "- 3 -", "Page 3", "Page 3 of 12", "iv".
bool isPageNumberLine(const QString& line);

// A first guess at the document's title: the first heading-like line near the top
// ("LICENSE AND HOSTING AGREEMENT"), skipping exhibit labels and party names.
QString guessTitle(const QString& text);

} // namespace cw::ingest
