#pragma once

#include <QList>
#include <QString>
#include <QStringView>

namespace cw::segment {

// The numbering families a clause marker can belong to. Markers of one family at one depth
// are siblings; the segmenter nests families in the order a document introduces them.
enum class MarkerStyle {
    Part, // PART I, Part 2
    Chapter, // CHAPTER 3, 第三章
    ChineseSection, // 第二节
    Article, // ARTICLE IV, Article 4
    ChineseArticle, // 第十二条
    Decimal, // 1. / 1 HEADING / 1.1 / 1.1.1 / Section 5.2 / § 5.2 (depth = components)
    ChineseEnum, // 一、
    ChineseParen, // （一）
    ParenDecimal, // (1) 1)
    ParenLower, // (a)
    ParenRoman, // (i) (iv)
    ParenUpper, // (A)
    ParenUpperRoman, // (IV)
    LowerDot, // a.
    UpperDot, // A.
    RomanLowerDot, // iv.
    RomanUpperDot, // IV.
    Attachment, // Schedule 1, Exhibit A, Annex II, Appendix B
};

struct Marker {
    MarkerStyle style = MarkerStyle::Decimal;
    QList<int> values; // 1-based; several for decimals ("5.2" -> {5, 2})
    QString label; // as written, trimmed: "5.2", "(a)", "Article IV", "第三条"
    qsizetype length = 0; // characters the marker takes at the line start, with spacing after
    bool keyword = false; // written with a word (Article, Section, Exhibit, 第...条)
    // (i), (v), (x), I., V.: a roman numeral or a letter; the segmenter picks the reading
    // that continues an open list. altValue < 0 when unambiguous.
    MarkerStyle altStyle = MarkerStyle::ParenLower;
    int altValue = -1;
};

// Reads the clause marker at the start of `line` (leading spaces already removed). Returns
// false when the line does not start like a numbered clause: "Section 5.2 of this
// Agreement", "2019. The", "12 months", "$1,000", "1.5 million" are rejected.
bool parseMarker(QStringView line, Marker& marker);

// Value of a roman numeral (i, iv, XII) or -1.
int romanValue(QStringView text);

// Whether `text` (what follows a marker) reads like a heading rather than running text:
// short, no sentence inside, capitals or Title Case.
bool looksLikeHeading(QStringView text);

// Depth of a marker in its family: components of a decimal, else 1.
inline int markerDepth(const Marker& marker)
{
    return marker.style == MarkerStyle::Decimal ? int(marker.values.size()) : 1;
}

} // namespace cw::segment
