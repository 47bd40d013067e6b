#include "app/segment/numbering_marker.h"

#include "app/segment/chinese_numerals.h"

#include <QRegularExpression>

namespace cw::segment {

namespace {

bool startsLower(QStringView rest)
{
    return !rest.isEmpty() && rest.front().isLower();
}

int letterValue(QStringView text)
{
    // a..z, then aa, bb ... as lists continue past z.
    if (text.isEmpty())
        return -1;
    for (QChar c : text) {
        if (c.toLower() != text.front().toLower())
            return -1;
    }
    return int(text.size() - 1) * 26 + (text.front().toLower().unicode() - 'a') + 1;
}

int wordNumber(const QString& word)
{
    static const char* const words[] = { "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN",
        "EIGHT", "NINE", "TEN", "ELEVEN", "TWELVE", "THIRTEEN", "FOURTEEN", "FIFTEEN", "SIXTEEN",
        "SEVENTEEN", "EIGHTEEN", "NINETEEN", "TWENTY" };
    const QString upper = word.toUpper();
    for (int i = 0; i < 20; ++i) {
        if (upper == QLatin1String(words[i]))
            return i + 1;
    }
    return -1;
}

// "5.2" -> {5, 2}; empty when a component is malformed ("05", "0").
QList<int> decimalValues(QStringView text)
{
    QList<int> values;
    for (QStringView part : text.split(QLatin1Char('.'))) {
        // "1.01" numbers with two digits after the first level; "05" alone is no clause.
        const bool zeroPadded = part.size() > 1 && part.front() == QLatin1Char('0');
        if (part.isEmpty() || part.size() > 3
            || (zeroPadded && (values.isEmpty() || part.size() != 2)))
            return {};
        bool ok = false;
        const int value = part.toInt(&ok);
        if (!ok)
            return {};
        values.append(value);
    }
    if (values.isEmpty() || values.front() == 0 || values.front() > 300)
        return {};
    return values;
}

// Keyword markers: Article IV, Section 5.2, § 3, Schedule A, Part 2, Chapter 1.
bool parseKeyword(QStringView line, Marker& marker)
{
    static const QRegularExpression pattern(QStringLiteral(
        "^(ARTICLE|Article|ART\\.|Art\\.|PART|Part|CHAPTER|Chapter|SECTION|Section|SEC\\.|Sec\\.|"
        "\\x{00A7}{1,2}|SCHEDULE|Schedule|EXHIBIT|Exhibit|ANNEX|Annex|APPENDIX|Appendix|ATTACHMENT|"
        "Attachment|ADDENDUM|Addendum)\\s*([0-9]{1,3}(?:\\.[0-9]{1,3})*|[IVXLC]{1,7}|[A-Z]{1,2}(?:-"
        "[0-9]{1,2})?"
        "|[A-Za-z]{3,9})(?=[\\s.:\\-\\x{2013}\\x{2014}(]|$)(\\.?\\)?:?)"));
    const QRegularExpressionMatch match = pattern.match(line);
    if (!match.hasMatch())
        return false;
    const QString word = match.captured(1);
    const QString number = match.captured(2);
    const bool section = word.startsWith(QLatin1String("S"))
        && !word.startsWith(QLatin1String("Sch")) && !word.startsWith(QLatin1String("SCH"));
    const bool paragraphSign = word.startsWith(QChar(0x00A7));
    if (!paragraphSign && match.capturedStart(2) == match.capturedEnd(1))
        return false; // "Section5" is not how anyone writes it
    marker.keyword = true;
    QStringView rest = line.mid(match.capturedEnd(0)).trimmed();
    if (startsLower(rest))
        return false; // "Section 5.2 of this Agreement", "Exhibit A attached hereto"
    const QChar first = word.front().toUpper();
    if (section || paragraphSign) {
        marker.style = MarkerStyle::Decimal;
        marker.values = decimalValues(number);
        if (marker.values.isEmpty())
            return false;
    } else {
        const bool attachment = first == QLatin1Char('S') || first == QLatin1Char('E')
            || (first == QLatin1Char('A') && !word.startsWith(QLatin1String("AR"))
                && !word.startsWith(QLatin1String("Ar")));
        int value = decimalValues(number).value(0, -1);
        if (value < 0 && attachment && number.size() == 1)
            value = letterValue(number);
        if (value < 0)
            value = romanValue(number);
        if (value < 0)
            value = wordNumber(number);
        if (value < 0 && number.size() <= 2)
            value = letterValue(number.left(1));
        if (value < 0)
            return false;
        marker.values = { value };
        if (word.startsWith(QLatin1String("ART")) || word.startsWith(QLatin1String("Art")))
            marker.style = MarkerStyle::Article;
        else if (first == QLatin1Char('P'))
            marker.style = MarkerStyle::Part;
        else if (first == QLatin1Char('C'))
            marker.style = MarkerStyle::Chapter;
        else
            marker.style = MarkerStyle::Attachment;
    }
    // A word used as a number must be one ("ARTICLE ONE"), not "Article Headings".
    if (number.size() >= 3 && number.front().isLetter() && romanValue(number) < 0
        && wordNumber(number) < 0)
        return false;
    marker.label = line.mid(0, match.capturedEnd(2)).toString();
    marker.length = match.capturedEnd(0);
    return true;
}

bool parseChinese(QStringView line, Marker& marker)
{
    static const QRegularExpression ordinal(
        QStringLiteral("^第\\s*([零〇一二两三四五六七八九十百千0-9\\x{FF10}-\\x{FF19}]{1,8})\\s*("
                       "条|條|章|节|節|款|部分|篇)"));
    static const QRegularExpression enumerated(
        QStringLiteral("^([一二三四五六七八九十]{1,4})[、．]"));
    static const QRegularExpression parenthesised(
        QStringLiteral("^[（(]([一二三四五六七八九十]{1,4}|[0-9]{1,3})[）)]"));
    QRegularExpressionMatch match = ordinal.match(line);
    if (match.hasMatch()) {
        const int value = parseChineseNumeral(match.capturedView(1));
        if (value <= 0)
            return false;
        const QString unit = match.captured(2);
        marker.style = unit == QStringLiteral("章") ? MarkerStyle::Chapter
            : (unit == QStringLiteral("节") || unit == QStringLiteral("節"))
            ? MarkerStyle::ChineseSection
            : unit == QStringLiteral("款") ? MarkerStyle::ParenDecimal
            : (unit == QStringLiteral("部分") || unit == QStringLiteral("篇"))
            ? MarkerStyle::Part
            : MarkerStyle::ChineseArticle;
        marker.keyword = true;
    } else if ((match = enumerated.match(line)).hasMatch()) {
        marker.style = MarkerStyle::ChineseEnum;
    } else if ((match = parenthesised.match(line)).hasMatch()) {
        const bool digits = match.capturedView(1).front().isDigit();
        marker.style = digits ? MarkerStyle::ParenDecimal : MarkerStyle::ChineseParen;
    } else {
        return false;
    }
    const int value = parseChineseNumeral(match.capturedView(1));
    if (value <= 0)
        return false;
    marker.values = { value };
    marker.label = match.captured(0);
    marker.length = match.capturedEnd(0);
    while (marker.length < line.size()
        && (line.at(marker.length).isSpace() || line.at(marker.length) == QChar(0x3000)))
        ++marker.length;
    return true;
}

bool parseDecimal(QStringView line, Marker& marker)
{
    static const QRegularExpression pattern(
        QStringLiteral("^(\\d{1,3}(?:\\.\\d{1,3}){0,5})(\\.|\\))?(?:\\s+|$)"));
    const QRegularExpressionMatch match = pattern.match(line);
    if (!match.hasMatch())
        return false;
    marker.values = decimalValues(match.capturedView(1));
    if (marker.values.isEmpty())
        return false;
    const QString suffix = match.captured(2);
    const QStringView rest = line.mid(match.capturedEnd(0));
    if (suffix == QLatin1String(")")) {
        if (marker.values.size() != 1)
            return false;
        marker.style = MarkerStyle::ParenDecimal;
    } else {
        marker.style = MarkerStyle::Decimal;
        // "12 months", "3 of 12": a bare number needs a heading after it.
        if (marker.values.size() == 1 && suffix.isEmpty() && !looksLikeHeading(rest))
            return false;
        if (marker.values.size() > 1 && startsLower(rest))
            return false; // "1.5 million"
    }
    if (rest.trimmed().isEmpty() && marker.values.size() == 1 && suffix.isEmpty())
        return false; // a page number
    marker.label = match.captured(1) + suffix;
    marker.length = match.capturedEnd(0);
    return true;
}

bool parseLetters(QStringView line, Marker& marker)
{
    static const QRegularExpression paren(
        QStringLiteral("^\\(([a-z]{1,5}|[A-Z]{1,5}|\\d{1,3})\\)(?:\\s+|$)"));
    static const QRegularExpression closing(
        QStringLiteral("^([a-z]{1,2}|[ivx]{1,5})\\)(?:\\s+|$)"));
    static const QRegularExpression dotted(
        QStringLiteral("^([a-z]|[ivx]{2,5}|[A-Z]|[IVXL]{2,6})\\.\\s+"));
    QRegularExpressionMatch match = paren.match(line);
    bool parenthesised = true;
    if (!match.hasMatch()) {
        match = closing.match(line);
        if (!match.hasMatch()) {
            match = dotted.match(line);
            parenthesised = false;
            if (!match.hasMatch())
                return false;
        }
    }
    const QString token = match.captured(1);
    const bool upper = token.front().isUpper();
    if (token.front().isDigit()) {
        marker.style = MarkerStyle::ParenDecimal;
        marker.values = { token.toInt() };
    } else {
        const int roman = romanValue(token);
        const int letter = letterValue(token);
        if (roman > 0) { // "ii", "iv" are numerals; "i", "v", "x" may be letters
            const MarkerStyle romanStyle = parenthesised
                ? (upper ? MarkerStyle::ParenUpperRoman : MarkerStyle::ParenRoman)
                : (upper ? MarkerStyle::RomanUpperDot : MarkerStyle::RomanLowerDot);
            const MarkerStyle letterStyle = parenthesised
                ? (upper ? MarkerStyle::ParenUpper : MarkerStyle::ParenLower)
                : (upper ? MarkerStyle::UpperDot : MarkerStyle::LowerDot);
            marker.style = romanStyle;
            marker.values = { roman };
            if (letter > 0) {
                // (i) starts a roman list; (v), (x) alone are more often letters.
                marker.altStyle = letterStyle;
                marker.altValue = letter;
                if (roman != 1) {
                    std::swap(marker.style, marker.altStyle);
                    marker.values = { letter };
                    marker.altValue = roman;
                }
            }
        } else if (letter > 0) {
            marker.values = { letter };
            marker.style = parenthesised
                ? (upper ? MarkerStyle::ParenUpper : MarkerStyle::ParenLower)
                : (upper ? MarkerStyle::UpperDot : MarkerStyle::LowerDot);
        } else {
            return false;
        }
    }
    marker.label = match.captured(0).trimmed();
    marker.length = match.capturedEnd(0);
    return true;
}

} // namespace

int romanValue(QStringView text)
{
    if (text.isEmpty() || text.size() > 9)
        return -1;
    auto digit = [](QChar c) {
        switch (c.toLower().unicode()) {
        case 'i':
            return 1;
        case 'v':
            return 5;
        case 'x':
            return 10;
        case 'l':
            return 50;
        case 'c':
            return 100;
        case 'd':
            return 500;
        case 'm':
            return 1000;
        default:
            return -1;
        }
    };
    const bool upper = text.front().isUpper();
    int total = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text.at(i).isUpper() != upper)
            return -1;
        const int value = digit(text.at(i));
        if (value < 0)
            return -1;
        const int next = i + 1 < text.size() ? digit(text.at(i + 1)) : 0;
        total += value < next ? -value : value;
    }
    if (total <= 0 || total > 100)
        return -1;
    // Canonical spelling only ("iiii", "vx" are not numerals).
    static const char* const canonical[]
        = { "", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix" };
    static const char* const tens[]
        = { "", "x", "xx", "xxx", "xl", "l", "lx", "lxx", "lxxx", "xc", "c" };
    const QString expected = QLatin1String(tens[total / 10]) + QLatin1String(canonical[total % 10]);
    return text.toString().toLower() == expected ? total : -1;
}

bool looksLikeHeading(QStringView text)
{
    const QStringView trimmed = text.trimmed();
    if (trimmed.isEmpty() || trimmed.size() > 100)
        return false;
    const QChar last = trimmed.back();
    if (last == QLatin1Char(',') || last == QLatin1Char(';'))
        return false;
    bool cjk = false;
    int letters = 0;
    int upper = 0;
    for (QChar c : trimmed) {
        if (c.unicode() >= 0x3400 && c.unicode() <= 0x9FFF)
            cjk = true;
        if (c.isLetter()) {
            ++letters;
            upper += c.isUpper() ? 1 : 0;
        }
    }
    if (cjk)
        return trimmed.size() <= 24 && !trimmed.contains(QChar(0x3002))
            && !trimmed.contains(QChar(0xFF0C));
    if (letters < 2)
        return false;
    // A sentence inside ("Term. This Agreement shall ...") is running text.
    const qsizetype stop = trimmed.indexOf(QLatin1String(". "));
    if (stop >= 0 && stop < trimmed.size() - 2)
        return false;
    if (upper * 10 >= letters * 8)
        return true;
    const auto words = trimmed.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (words.size() > 12 || !words.front().front().isUpper())
        return false;
    int longWords = 0;
    int capitalised = 0;
    for (QStringView word : words) {
        if (word.size() < 4)
            continue;
        ++longWords;
        capitalised += word.front().isUpper() ? 1 : 0;
    }
    return longWords == 0 || capitalised * 10 >= longWords * 6;
}

bool parseMarker(QStringView line, Marker& marker)
{
    marker = Marker {};
    if (line.isEmpty())
        return false;
    const QStringView head = line.left(200);
    const QChar first = head.front();
    if (first == QChar(0x7B2C) || first == QLatin1Char('(') || first == QChar(0xFF08)
        || (first.unicode() >= 0x4E00 && first.unicode() <= 0x9FFF)) {
        if (parseChinese(head, marker))
            return true;
    }
    if (first.isDigit())
        return parseDecimal(head, marker);
    if (first.isLetter() || first == QChar(0x00A7)) {
        if (parseKeyword(head, marker))
            return true;
        marker = Marker {};
    }
    return parseLetters(head, marker);
}

} // namespace cw::segment
