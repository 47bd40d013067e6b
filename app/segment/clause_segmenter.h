#pragma once

#include "app/review/review_types.h"

#include <QList>

namespace cw {

// Splits a document into sections and clauses by their numbering ("1.", "1.1", "(a)", "(i)",
// "Article IV", "Section 5.2", "§ 3", "第三条"), by headings in capitals or bold, by
// Schedule/Exhibit/Annex headings, and by definitions ("X" means ...). Clauses come in text
// order; each has its span in Document::text, its page, its nesting level and parent index.
// A clause runs from its number to the start of the next clause at the same or a higher
// level (so a section's span contains its sub-clauses). Text before the first numbered
// clause (title, parties, recitals) is a level-0 clause with an empty number.
QList<Clause> segmentClauses(const Document& document);

} // namespace cw
