#include "app/ingest/text_assembler.h"

#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <algorithm>
#include <vector>

namespace cw::ingest {

namespace {

constexpr int kZoneLines = 4; // lines at each page edge that may be header or footer
constexpr double kZoneFraction = 0.2; // ... and lie in this top/bottom part of the page

QString cleanLine(const QString& raw)
{
    QString line;
    line.reserve(raw.size());
    bool space = false;
    for (QChar c : raw) {
        if (c == QChar(0x00AD)) // soft hyphen: invisible
            continue;
        if (c.isSpace() || c == QChar(0x00A0) || c.category() == QChar::Other_Control) {
            space = !line.isEmpty();
            continue;
        }
        if (space)
            line += QLatin1Char(' ');
        space = false;
        line += c;
    }
    return line;
}

// The shape of a line with its numbers blanked, to find lines repeated on many pages.
QString repetitionKey(const QString& line)
{
    QString key;
    for (QChar c : line) {
        if (c.isDigit())
            key += QLatin1Char('#');
        else if (!c.isSpace())
            key += c.toLower();
    }
    return key;
}

bool isEdgarSourceLine(const QString& line)
{
    static const QRegularExpression source(
        QStringLiteral("^Source:\\s.+\\d{4}$"), QRegularExpression::CaseInsensitiveOption);
    return source.match(line).hasMatch();
}

struct PageLine {
    const LayoutLine* line = nullptr;
    QString text;
    int page = 0;
    bool removed = false;
};

// The number a page-number line shows ("- 3 -", "Page 3 of 12", "3"), or -1.
int pageNumberValue(const QString& line)
{
    if (!isPageNumberLine(line))
        return -1;
    static const QRegularExpression digits(QStringLiteral("\\d+"));
    const auto match = digits.match(line);
    return match.hasMatch() ? match.captured().toInt() : -1;
}

void markHeadersFooters(const QList<LayoutPage>& pages, std::vector<std::vector<PageLine>>& lines)
{
    // Lines in the edge zones of each page.
    auto inZone = [&](std::size_t p, std::size_t i) {
        const auto& page = lines[p];
        const double height = pages[qsizetype(p)].size.height();
        const QRectF& box = page[i].line->box;
        const bool top = i < kZoneLines && (height <= 0 || box.bottom() < height * kZoneFraction);
        const bool bottom = i + kZoneLines >= page.size()
            && (height <= 0 || box.top() > height * (1.0 - kZoneFraction));
        return top || bottom;
    };
    QHash<QString, int> pagesWithKeyInZone;
    QHash<QString, int> pagesWithKey;
    for (std::size_t p = 0; p < lines.size(); ++p) {
        QSet<QString> seenInZone;
        QSet<QString> seen;
        for (std::size_t i = 0; i < lines[p].size(); ++i) {
            // Mid-page repeats must match exactly: body lines that differ only in their
            // numbers are not footers.
            seen.insert(lines[p][i].text.toLower());
            if (inZone(p, i))
                seenInZone.insert(repetitionKey(lines[p][i].text));
        }
        for (const QString& key : std::as_const(seenInZone))
            ++pagesWithKeyInZone[key];
        for (const QString& key : std::as_const(seen))
            ++pagesWithKey[key];
    }
    const int pageCount = int(lines.size());
    const int needed
        = pageCount <= 3 ? std::max(2, pageCount) : std::max(3, (pageCount * 2 + 4) / 5);
    // Running headers and footers not at the page edges: converters that put several
    // original pages on one PDF page leave them mid-page. Only long lines repeated on most
    // pages count, so repeated body lines ("Name:", "(a)") stay.
    const int neededAnywhere = std::max(3, (pageCount * 3 + 9) / 10);
    struct Candidate {
        PageLine* line;
        int value;
    };
    std::vector<Candidate> numbers;
    for (std::size_t p = 0; p < lines.size(); ++p) {
        for (std::size_t i = 0; i < lines[p].size(); ++i) {
            PageLine& line = lines[p][i];
            const QString key = repetitionKey(line.text);
            const bool zone = inZone(p, i);
            const bool repeatedAtEdge = zone && key.size() >= 5 && pageCount >= 2
                && pagesWithKeyInZone.value(key) >= needed;
            const bool repeatedAnywhere
                = key.size() >= 30 && pagesWithKey.value(line.text.toLower()) >= neededAnywhere;
            if (repeatedAtEdge || repeatedAnywhere || isEdgarSourceLine(line.text)
                || (zone && isPageNumberLine(line.text)))
                line.removed = true;
            if (!line.removed) {
                const int value = pageNumberValue(line.text);
                if (value >= 0)
                    numbers.push_back({ &line, value });
            }
        }
    }
    // The short lines of a repeated block: repeated themselves and next to a removed line.
    for (int pass = 0; pass < 2; ++pass) {
        for (auto& page : lines) {
            for (std::size_t i = 0; i < page.size(); ++i) {
                PageLine& line = page[i];
                if (line.removed)
                    continue;
                const QString key = repetitionKey(line.text);
                const bool neighbour = (i > 0 && page[i - 1].removed)
                    || (i + 1 < page.size() && page[i + 1].removed);
                if (neighbour && key.size() >= 5
                    && pagesWithKey.value(line.text.toLower()) >= neededAnywhere)
                    line.removed = true;
            }
        }
    }
    // Page numbers mid-page: bare numbers on their own line that count up 1, 1, 2, 2, 3 ...
    // through the document.
    std::size_t runStart = 0;
    for (std::size_t i = 1; i <= numbers.size(); ++i) {
        const bool continues = i < numbers.size()
            && (numbers[i].value == numbers[i - 1].value
                || numbers[i].value == numbers[i - 1].value + 1);
        if (continues)
            continue;
        if (i - runStart >= 3) {
            for (std::size_t j = runStart; j < i; ++j)
                numbers[j].line->removed = true;
        }
        runStart = i;
    }
}

bool endsSentence(const QString& text)
{
    if (text.isEmpty())
        return false;
    const QChar last = text.back();
    return last == QLatin1Char('.') || last == QLatin1Char(':') || last == QLatin1Char(';')
        || last == QLatin1Char('!') || last == QLatin1Char('?') || last == QChar(0x3002);
}

bool isAllCaps(const QString& text)
{
    int upper = 0;
    for (QChar c : text) {
        if (c.isLower())
            return false;
        if (c.isUpper())
            ++upper;
    }
    return upper >= 2;
}

bool startsWithMarker(const QString& text)
{
    static const QRegularExpression marker(QStringLiteral(
        "^(?:\\(?\\d{1,3}(?:\\.\\d{1,3})*[.)]\\s|\\d{1,3}(?:\\.\\d{1,3})+\\s|\\([a-zA-Z]{1,5}\\)"
        "\\s|"
        "[a-zA-Z][.)]\\s|[\\x{2022}\\x{25CF}\\x{25AA}\\x{F0B7}\\-\\*]\\s|"
        "(?:ARTICLE|Article|SECTION|Section|SCHEDULE|Schedule|EXHIBIT|Exhibit|ANNEX|Annex|"
        "APPENDIX|Appendix)\\s+[0-9IVXLCA-Z]+[.:]?(?:\\s|$)|\\x{00A7}|\\x{7B2C})"));
    return marker.match(text).hasMatch();
}

struct ColumnMetrics {
    double left = 0.0;
    double right = 0.0;
    double pitch = 0.0; // usual distance between the tops of consecutive lines
};

ColumnMetrics measureColumn(const std::vector<PageLine>& lines, int column)
{
    ColumnMetrics metrics;
    std::vector<double> lefts, rights, pitches;
    const PageLine* previous = nullptr;
    for (const PageLine& line : lines) {
        if (line.removed || line.line->column != column)
            continue;
        if (line.text.size() >= 30) {
            lefts.push_back(line.line->box.left());
            rights.push_back(line.line->box.right());
        }
        if (previous) {
            const double pitch = line.line->box.top() - previous->line->box.top();
            const double size = std::max(1.0, line.line->fontSize);
            if (pitch > 0.5 * size && pitch < 3.0 * size)
                pitches.push_back(pitch);
        }
        previous = &line;
    }
    auto percentile = [](std::vector<double>& v, double q) {
        if (v.empty())
            return 0.0;
        const auto it = v.begin() + std::ptrdiff_t(double(v.size() - 1) * q);
        std::nth_element(v.begin(), it, v.end());
        return *it;
    };
    metrics.left = percentile(lefts, 0.1);
    metrics.right = percentile(rights, 0.9);
    metrics.pitch = percentile(pitches, 0.5);
    return metrics;
}

bool continuesAcrossBreak(const QString& previous, const QString& current)
{
    return !previous.isEmpty() && !current.isEmpty() && !endsSentence(previous)
        && current.front().isLower();
}

// Whether `current` starts a new paragraph after `previous` on the same page and column.
bool startsParagraph(const PageLine& previous, const PageLine& current, const ColumnMetrics& m)
{
    const LayoutLine& a = *previous.line;
    const LayoutLine& b = *current.line;
    const double size = std::max(1.0, std::max(a.fontSize, b.fontSize));
    const double pitch = b.box.top() - a.box.top();
    if (pitch < 0.0)
        return true;
    if (m.pitch > 0.0 ? pitch > 1.45 * m.pitch : b.box.top() - a.box.bottom() > 0.8 * size)
        return true;
    const double width = m.right - m.left;
    const bool previousShort = width > 0.0 && a.box.right() < m.left + 0.75 * width;
    if (startsWithMarker(current.text) && (previousShort || endsSentence(previous.text)))
        return true;
    if (previousShort
        && (endsSentence(previous.text) || isAllCaps(previous.text)
            || (!current.text.isEmpty() && !current.text.front().isLower())))
        return true;
    if (isAllCaps(previous.text) && !isAllCaps(current.text) && previous.text.size() < 80)
        return true;
    if (b.box.left() > a.box.left() + 2.0 * size && !startsWithMarker(previous.text)
        && !current.text.isEmpty() && current.text.front().isUpper() && endsSentence(previous.text))
        return true;
    return false;
}

bool hyphenatedBreak(const QString& previous, const QString& current)
{
    if (previous.size() < 3 || current.isEmpty())
        return false;
    const QChar hyphen = previous.back();
    if (hyphen != QLatin1Char('-') && hyphen != QChar(0x2010))
        return false;
    return previous.at(previous.size() - 2).isLetter() && current.front().isLower();
}

} // namespace

bool isPageNumberLine(const QString& line)
{
    static const QRegularExpression pageNumber(
        QStringLiteral(
            "^(?:[-\\x{2013}\\x{2014}~\\s]*\\d{1,4}[-\\x{2013}\\x{2014}'\\x{2019}\\s]*|"
            "page\\s*\\d{1,4}(?:\\s*(?:of|/)\\s*\\d{1,4})?|\\d{1,4}\\s*(?:of|/)\\s*\\d{1,4}|"
            "[-\\x{2013}\\s]*[ivxlc]{1,7}[-\\x{2013}\\s]*)$"),
        QRegularExpression::CaseInsensitiveOption);
    const QString trimmed = line.trimmed();
    if (trimmed.isEmpty())
        return false;
    // Upper-case roman numerals alone are more often list items than page numbers.
    if (trimmed.front().isUpper() && !trimmed.startsWith(QLatin1String("Page"))
        && !trimmed.startsWith(QLatin1String("PAGE")))
        return false;
    return pageNumber.match(trimmed).hasMatch();
}

void assembleText(
    const QList<LayoutPage>& pages, const AssembleOptions& options, Document& document)
{
    std::vector<std::vector<PageLine>> lines(std::size_t(pages.size()));
    document.pages.clear();
    for (qsizetype p = 0; p < pages.size(); ++p) {
        const LayoutPage& page = pages[p];
        document.pages.append(PageInfo { page.number, page.size, page.hasTextLayer });
        for (const LayoutLine& line : page.lines) {
            QString text = cleanLine(line.text);
            if (!text.isEmpty())
                lines[std::size_t(p)].push_back(PageLine { &line, text, page.number, false });
        }
    }
    if (options.removeHeadersFooters)
        markHeadersFooters(pages, lines);

    QString& text = document.text;
    text.clear();
    document.lines.clear();
    const PageLine* previous = nullptr;
    bool removedSincePrevious = false;
    for (std::size_t p = 0; p < lines.size(); ++p) {
        const ColumnMetrics metrics[2] = { measureColumn(lines[p], 0), measureColumn(lines[p], 1) };
        for (const PageLine& line : lines[p]) {
            if (line.removed) {
                removedSincePrevious = true;
                continue;
            }
            if (previous) {
                const bool sameFlow = previous->page == line.page
                    && previous->line->column == line.line->column && !removedSincePrevious;
                const bool newParagraph = sameFlow
                    ? startsParagraph(*previous, line, metrics[std::min(line.line->column, 1)])
                    : !continuesAcrossBreak(previous->text, line.text);
                if (newParagraph) {
                    text += QLatin1String("\n\n");
                } else if (options.dehyphenate && hyphenatedBreak(previous->text, line.text)) {
                    text.chop(1);
                    document.lines.back().end = text.size();
                } else {
                    text += QLatin1Char(' ');
                }
            }
            TextLine out;
            out.page = line.page;
            out.box = line.line->box;
            out.start = text.size();
            text += line.text;
            out.end = text.size();
            out.bold = line.line->bold;
            out.fontSize = line.line->fontSize;
            document.lines.append(out);
            previous = &line;
            removedSincePrevious = false;
        }
    }
}

QString guessTitle(const QString& text)
{
    static const QRegularExpression kind(
        QStringLiteral(
            "\\b(agreement|contract|lease|licen[cs]e|amendment|addendum|deed|"
            "memorandum|terms|plan|charter|bylaws|indenture|note|guaranty|"
            "guarantee|undertaking|arrangement)\\b|\\x{5408}\\x{540C}|\\x{534F}\\x{8BAE}"),
        QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression label(
        QStringLiteral("^(exhibit|schedule|annex|appendix)\\b[^a-z]*$|^execution (version|copy)$|"
                       "^confidential|omitted"),
        QRegularExpression::CaseInsensitiveOption);
    const QStringList candidates = text.left(4000).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QString firstCaps;
    QString firstLine;
    int seen = 0;
    for (const QString& raw : candidates) {
        const QString line = raw.simplified();
        if (line.isEmpty() || isPageNumberLine(line) || label.match(line).hasMatch())
            continue;
        if (++seen > 25)
            break;
        if (firstLine.isEmpty())
            firstLine = line;
        const bool shortLine = line.size() <= 120 && line.count(QLatin1Char(' ')) < 14;
        if (!shortLine)
            continue;
        if (isAllCaps(line) && kind.match(line).hasMatch())
            return line;
        if (firstCaps.isEmpty() && isAllCaps(line))
            firstCaps = line;
    }
    for (const QString& raw : candidates.mid(0, 25)) {
        const QString line = raw.simplified();
        if (line.size() <= 120 && line.count(QLatin1Char(' ')) < 12 && kind.match(line).hasMatch()
            && !label.match(line).hasMatch() && !endsSentence(line))
            return line;
    }
    return !firstCaps.isEmpty() ? firstCaps : firstLine.left(120);
}

} // namespace cw::ingest
