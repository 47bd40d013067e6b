#pragma once

#include <QList>
#include <QRectF>
#include <QSizeF>
#include <QString>

namespace cw::ingest {

// One word as the PDF library reports it: its text and box in page points (origin
// top-left). `spaceAfter` is false when the next word of the same run follows without a
// space; `continuesRun` is true when this word continues the previous word's run (the
// same line fragment in the library's own layout).
struct LaidWord {
    QString text;
    QRectF box;
    bool spaceAfter = true;
    bool continuesRun = false;
};

// One visual line of a page: its words joined, its box, font size (median word height).
struct LayoutLine {
    QString text;
    QRectF box;
    double fontSize = 0.0;
    bool bold = false;
    int column = 0;
};

// A page of lines in reading order.
struct LayoutPage {
    int number = 0; // 1-based
    QSizeF size;
    bool hasTextLayer = true;
    QList<LayoutLine> lines;
};

// Groups a page's words into visual lines and orders them for reading: text columns
// (found by a vertical gutter no line crosses) left to right, lines top to bottom within a
// column. Words on one visual line are joined left to right, so a clause number separated
// from its text by a wide gap ("1.1        "Software" means ...") stays on its line.
QList<LayoutLine> layoutLines(const QList<LaidWord>& words, const QSizeF& pageSize);

} // namespace cw::ingest
