#include "app/segment/clause_segmenter.h"

#include "app/segment/numbering_marker.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>

namespace cw {

namespace {

using segment::Marker;
using segment::MarkerStyle;

struct Line {
    qsizetype start = 0; // first non-space character
    qsizetype end = 0;
    QStringView text;
    bool bold = false;
    Marker marker;
    bool numbered = false;
};

constexpr int kDynamicRank = 100; // letters, parentheses: nest in the order they appear
constexpr int kHeadingRank = -1;

// Fixed ranks for the families that always nest the same way.
int rankOf(MarkerStyle style, int depth)
{
    switch (style) {
    case MarkerStyle::Attachment:
        return 0;
    case MarkerStyle::Part:
        return 1;
    case MarkerStyle::Chapter:
        return 2;
    case MarkerStyle::ChineseSection:
        return 3;
    case MarkerStyle::Article:
        return 4;
    case MarkerStyle::ChineseArticle:
        return 5;
    case MarkerStyle::Decimal:
        return 4 + std::clamp(depth, 1, 8);
    default:
        return kDynamicRank;
    }
}

struct Open {
    MarkerStyle style;
    int depth = 1;
    int rank = 0;
    QList<int> values;
    int clause = -1;
};

bool sameFamily(const Open& open, const Marker& marker)
{
    return open.style == marker.style && open.depth == segment::markerDepth(marker);
}

// Whether `next` can follow `previous` in one list: the next value (gaps of up to 3 for
// omitted or merged items), or a restart at 1.
bool continues(const QList<int>& previous, const QList<int>& next)
{
    if (next.isEmpty())
        return false;
    if (std::all_of(next.begin(), next.end(), [](int v) { return v == 1; }))
        return true;
    if (previous.size() != next.size())
        return true;
    const qsizetype last = next.size() - 1;
    for (qsizetype i = 0; i < last; ++i) {
        if (next[i] != previous[i]) // a new parent: 4.3 -> 5.1; not backwards
            return next[i] > previous[i] && next[i] - previous[i] <= 3 && next[last] <= 2;
    }
    return next[last] > previous[last] && next[last] - previous[last] <= 3;
}

bool isAllCaps(QStringView text)
{
    int upper = 0;
    for (QChar c : text) {
        if (c.isLower())
            return false;
        upper += c.isUpper() ? 1 : 0;
    }
    return upper >= 3;
}

QString cleanHeading(QStringView text)
{
    QString heading = text.trimmed().toString();
    while (!heading.isEmpty()
        && (heading.back() == QLatin1Char('.') || heading.back() == QLatin1Char(':')
            || heading.back() == QLatin1Char('-') || heading.back().isSpace()))
        heading.chop(1);
    if (heading.startsWith(QChar(0x3010)) && heading.endsWith(QChar(0x3011)))
        heading = heading.mid(1, heading.size() - 2);
    return heading.simplified();
}

// "Software" from `"Software" means ...` / `Affiliate means ...`; empty otherwise.
QString definedTerm(QStringView text, bool numbered)
{
    static const QRegularExpression quoted(
        QStringLiteral("^[\"\\x{201C}\\x{2018}']([^\"\\x{201D}\\x{2019}']{1,80})[\"\\x{201D}\\x{"
                       "2019}']\\s*(?:\\([^)]{0,80}\\)\\s*)?"
                       ",?\\s*(?:shall\\s+)?(?:means?|have\\s+the\\s+meanings?|has\\s+the\\s+"
                       "meaning|shall\\s+have\\s+the\\s+meaning|"
                       "refers?\\s+to|includes?|is\\s+defined|:)"));
    static const QRegularExpression bare(QStringLiteral(
        "^([A-Z][\\w\\-]*(?:\\s+[A-Za-z][\\w\\-]*){0,5})\\s+(?:shall\\s+)?means\\b"));
    QRegularExpressionMatch match = quoted.match(text.left(200));
    if (match.hasMatch())
        return match.captured(1).simplified();
    if (numbered && (match = bare.match(text.left(120))).hasMatch())
        return match.captured(1).simplified();
    return {};
}

// The heading written after a clause number: the whole rest when it reads like one
// ("GRANT OF RIGHTS."), or a leading title sentence ("Hosting Software License. Subject to").
QString headingAfterMarker(QStringView rest)
{
    if (segment::looksLikeHeading(rest))
        return cleanHeading(rest);
    static const QRegularExpression titled(
        QStringLiteral("^((?:[^.:;\\x{3002}]|\\.(?=\\S)){2,80}?)(?:[.:]\\s|\\s{3,}|\\x{3011}|"
                       "\\s[-\\x{2013}\\x{2014}]\\s)"));
    const QRegularExpressionMatch match = titled.match(rest.left(120));
    if (match.hasMatch() && segment::looksLikeHeading(match.capturedView(1))
        && match.capturedView(1).size() >= 3)
        return cleanHeading(match.capturedView(1));
    if (rest.startsWith(QChar(0x3010))) {
        const qsizetype close = rest.indexOf(QChar(0x3011));
        if (close > 1 && close < 30)
            return rest.mid(1, close - 1).toString();
    }
    return {};
}

// Where a clause starts inside a line: text converted from HTML often runs whole sections
// together ("... as follows: 1. Services. Consultant shall ..."). Only numbers with a
// heading after them ("2. Term.") and keyword markers with a capitalised heading count;
// cross-references ("pursuant to Section 5.2") have no sentence end before them.
QList<qsizetype> inlineStarts(QStringView text)
{
    static const QRegularExpression candidate(
        QStringLiteral("(?:[.:;!?\"\\x{201D})\\]]\\s+|\\s{2,})(?=\\d|ARTICLE|Article|SECTION|"
                       "Section|\\x{00A7}|\\x{7B2C}|"
                       "SCHEDULE|EXHIBIT|ANNEX|APPENDIX|\\(|[a-zA-Z]{1,4}[.)]\\s)"));
    QList<qsizetype> starts;
    auto it = candidate.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch match = it.next();
        const qsizetype at = match.capturedEnd(0);
        const QStringView rest = text.mid(at);
        Marker marker;
        if (!segment::parseMarker(rest, marker))
            continue;
        const QStringView after = rest.mid(marker.length).trimmed();
        bool strong = false;
        switch (marker.style) {
        case MarkerStyle::Article:
        case MarkerStyle::Part:
        case MarkerStyle::Chapter:
        case MarkerStyle::Attachment:
            strong = !after.isEmpty() && after.front().isUpper()
                && (after.size() < 2 || after.at(1).isUpper() || after.at(1).isSpace());
            break;
        case MarkerStyle::ChineseArticle:
        case MarkerStyle::ChineseSection:
            strong = true;
            break;
        case MarkerStyle::Decimal:
            strong = !headingAfterMarker(after).isEmpty();
            break;
        default:
            // "(a)", "b.", "2)" items set apart by a wide gap, as text converted from
            // HTML lays out lists.
            strong = match.captured(0).endsWith(QLatin1String("   ")) && !after.isEmpty()
                && (after.front().isUpper() || !headingAfterMarker(after).isEmpty());
            break;
        }
        if (strong)
            starts.append(at);
    }
    return starts;
}

QList<Line> splitLines(const Document& document)
{
    QList<Line> lines;
    const QString& text = document.text;
    qsizetype lineIndex = 0;
    qsizetype start = 0;
    while (start <= text.size()) {
        qsizetype end = start;
        while (end < text.size() && text.at(end) != QLatin1Char('\n')
            && text.at(end) != QLatin1Char('\f'))
            ++end;
        qsizetype first = start;
        while (first < end && (text.at(first).isSpace() || text.at(first) == QChar(0x3000)))
            ++first;
        qsizetype last = end;
        while (last > first && text.at(last - 1).isSpace())
            --last;
        if (last > first) {
            QList<qsizetype> pieces = inlineStarts(QStringView(text).mid(first, last - first));
            pieces.prepend(0);
            for (qsizetype k = 0; k < pieces.size(); ++k) {
                Line line;
                line.start = first + pieces[k];
                line.end = k + 1 < pieces.size() ? first + pieces[k + 1] : last;
                while (line.end > line.start && text.at(line.end - 1).isSpace())
                    --line.end;
                line.text = QStringView(text).mid(line.start, line.end - line.start);
                while (lineIndex + 1 < document.lines.size()
                    && document.lines[lineIndex + 1].start <= line.start)
                    ++lineIndex;
                if (lineIndex < document.lines.size()) {
                    const TextLine& laid = document.lines[lineIndex];
                    line.bold = laid.bold && laid.start <= line.start && line.start < laid.end;
                }
                lines.append(line);
            }
        }
        start = end + 1;
    }
    return lines;
}

QString markerKey(const Marker& marker)
{
    QString key = QString::number(int(marker.style)) + QLatin1Char(':');
    for (int value : marker.values)
        key += QString::number(value) + QLatin1Char('.');
    return key;
}

// Table-of-contents entries repeat the numbers of the clauses they list: short lines,
// several in a row, whose numbers come again later. They stay in the text, not as clauses.
void dropTableOfContents(QList<Line>& lines)
{
    static const QRegularExpression leader(QStringLiteral("(?:\\.{4,}|\\s{3,}|\\t)\\s*\\d{1,3}$"));
    QHash<QString, int> lastIndex;
    for (int i = 0; i < lines.size(); ++i) {
        if (lines[i].numbered)
            lastIndex.insert(markerKey(lines[i].marker), i);
    }
    auto tocLike = [&](int i) {
        const Line& line = lines[i];
        if (!line.numbered)
            return false;
        if (leader.match(line.text).hasMatch())
            return true;
        const bool shortLine = line.text.size() <= 150 && !line.text.contains(QLatin1String(". "));
        return shortLine && lastIndex.value(markerKey(line.marker)) > i;
    };
    int runStart = -1;
    int runCount = 0;
    for (int i = 0; i <= lines.size(); ++i) {
        const bool toc = i < lines.size() && tocLike(i);
        const bool neutral = i < lines.size() && !lines[i].numbered && lines[i].text.size() <= 80;
        if (toc) {
            if (runStart < 0)
                runStart = i;
            ++runCount;
            continue;
        }
        if (neutral && runStart >= 0)
            continue;
        if (runStart >= 0 && runCount >= 4) {
            for (int j = runStart; j < i; ++j)
                lines[j].numbered = false;
        }
        runStart = -1;
        runCount = 0;
    }
}

QString familyKey(MarkerStyle style, int depth)
{
    return QString::number(int(style)) + QLatin1Char('/') + QString::number(depth);
}

class Segmenter {
public:
    explicit Segmenter(const Document& document)
        : m_document(document)
    {
    }

    QList<Clause> run()
    {
        QList<Line> lines = splitLines(m_document);
        for (Line& line : lines)
            line.numbered = segment::parseMarker(line.text, line.marker);
        dropTableOfContents(lines);
        for (int i = 0; i < lines.size(); ++i)
            visit(lines, i);
        finish();
        return m_clauses;
    }

private:
    void visit(const QList<Line>& lines, int i)
    {
        const Line& line = lines[i];
        if (line.numbered && addNumbered(lines, i))
            return;
        if (i == m_headingLine)
            return;
        if (line.text.size() >= 150)
            m_seenBody = true;
        const QString term = definedTerm(line.text, false);
        if (!term.isEmpty() && m_seenBody) {
            addClause(line.start, ClauseKind::Definition, {}, term, int(m_stack.size()), false);
            return;
        }
        const bool headingLike = line.text.size() <= 80 && segment::looksLikeHeading(line.text)
            && (isAllCaps(line.text) || line.bold);
        const bool onlyHeadingsOpen = std::all_of(
            m_stack.begin(), m_stack.end(), [](const Open& o) { return o.rank == kHeadingRank; });
        if (headingLike && m_seenBody && onlyHeadingsOpen) {
            m_stack.clear();
            const int index
                = addClause(line.start, ClauseKind::Heading, {}, cleanHeading(line.text), 0, false);
            m_stack.append(Open { MarkerStyle::Attachment, 1, kHeadingRank, {}, index });
        }
    }

    bool addNumbered(const QList<Line>& lines, int i)
    {
        const Line& line = lines[i];
        Marker marker = line.marker;
        QStringView rest = line.text.mid(marker.length).trimmed();
        // "Article 3 - Miscellaneous", "Exhibit A: Form of Notice"
        while (!rest.isEmpty()
            && (rest.front() == QLatin1Char('-') || rest.front() == QChar(0x2013)
                || rest.front() == QChar(0x2014) || rest.front() == QLatin1Char(':')
                || rest.front() == QLatin1Char('.') || rest.front().isSpace()))
            rest = rest.mid(1);
        if (marker.style == MarkerStyle::Attachment
            && (!m_seenBody
                || (!rest.trimmed().isEmpty() && !segment::looksLikeHeading(rest)
                    && !isAllCaps(rest))))
            return false; // the filing's "EXHIBIT 10.5" label, or "Exhibit A attached hereto"
        chooseReading(marker);
        const int depth = segment::markerDepth(marker);
        const int rank = rankOf(marker.style, depth);
        int level = 0;
        if (rank == kDynamicRank) {
            qsizetype found = -1;
            for (qsizetype k = m_stack.size() - 1; k >= 0 && m_stack[k].rank == kDynamicRank; --k) {
                if (sameFamily(m_stack[k], marker)) {
                    found = k;
                    break;
                }
            }
            if (found >= 0) {
                if (!continues(m_stack[found].values, marker.values))
                    return false;
                m_stack.resize(found);
            } else if (marker.values.value(0) != 1) {
                return false; // a list starts at its first item
            }
            level = int(m_stack.size());
        } else {
            const auto previous = m_lastByFamily.constFind(familyKey(marker.style, depth));
            if (marker.style != MarkerStyle::Attachment && previous != m_lastByFamily.constEnd()
                && !continues(*previous, marker.values))
                return false;
            if (previous == m_lastByFamily.constEnd() && marker.style == MarkerStyle::Decimal
                && depth == 1 && marker.values.value(0) > 3 && !marker.keyword)
                return false; // the first numbered section of a document is 1, 2 or 3
            while (!m_stack.isEmpty()
                && (m_stack.back().rank >= rank || m_stack.back().rank == kHeadingRank))
                m_stack.removeLast();
            level = int(m_stack.size());
        }
        m_lastByFamily.insert(familyKey(marker.style, depth), marker.values);
        m_seenBody = true;

        QString term = definedTerm(rest, true);
        QString heading = term.isEmpty() ? headingAfterMarker(rest) : term;
        if (heading.isEmpty() && rest.trimmed().isEmpty() && i + 1 < lines.size()) {
            // "ARTICLE 1" on its own line, its heading on the next.
            const Line& next = lines[i + 1];
            if (!next.numbered && next.text.size() <= 100 && segment::looksLikeHeading(next.text)) {
                heading = cleanHeading(next.text);
                m_headingLine = i + 1;
            }
        }
        const ClauseKind kind = !term.isEmpty()       ? ClauseKind::Definition
            : marker.style == MarkerStyle::Attachment ? ClauseKind::Attachment
                                                      : ClauseKind::Numbered;
        const int index = addClause(line.start, kind, marker.label, heading, level, true);
        m_stack.append(Open { marker.style, depth, rank, marker.values, index });
        return true;
    }

    // (i) after (h) is a letter; (v) after (iv) is a roman numeral.
    void chooseReading(Marker& marker) const
    {
        if (marker.altValue < 0)
            return;
        for (qsizetype k = m_stack.size() - 1; k >= 0; --k) {
            const Open& open = m_stack[k];
            if (open.style == marker.style && open.values.value(0) == marker.values.value(0) - 1)
                return;
            if (open.style == marker.altStyle && open.values.value(0) == marker.altValue - 1) {
                std::swap(marker.style, marker.altStyle);
                const int value = marker.altValue;
                marker.altValue = marker.values.value(0);
                marker.values = { value };
                return;
            }
        }
    }

    int addClause(qsizetype start, ClauseKind kind, const QString& number, const QString& heading,
        int level, bool)
    {
        if (m_clauses.isEmpty()) {
            // Text before the first clause: title, parties, recitals.
            qsizetype first = 0;
            const QString& text = m_document.text;
            while (first < start && text.at(first).isSpace())
                ++first;
            if (first < start) {
                Clause preamble;
                preamble.kind = ClauseKind::Preamble;
                preamble.start = first;
                preamble.page = m_document.pageAt(first);
                m_clauses.append(preamble);
            }
        }
        Clause clause;
        clause.index = int(m_clauses.size());
        clause.kind = kind;
        clause.number = number;
        clause.heading = heading;
        clause.level = level;
        clause.start = start;
        clause.page = m_document.pageAt(start);
        clause.parent = level > 0 && level <= m_stack.size() ? m_stack[level - 1].clause : -1;
        m_clauses.append(clause);
        return clause.index;
    }

    void finish()
    {
        const QString& text = m_document.text;
        if (m_clauses.isEmpty() && !text.trimmed().isEmpty()) {
            // No numbering at all: the whole text is one preamble-like clause.
            Clause whole;
            whole.kind = ClauseKind::Preamble;
            while (whole.start < text.size() && text.at(whole.start).isSpace())
                ++whole.start;
            whole.page = m_document.pageAt(whole.start);
            m_clauses.append(whole);
        }
        auto trimmedEnd = [&](qsizetype end, qsizetype start) {
            while (end > start && text.at(end - 1).isSpace())
                --end;
            return end;
        };
        for (qsizetype i = 0; i < m_clauses.size(); ++i) {
            Clause& clause = m_clauses[i];
            clause.index = int(i);
            const qsizetype next = i + 1 < m_clauses.size() ? m_clauses[i + 1].start : text.size();
            clause.ownEnd = trimmedEnd(next, clause.start);
            qsizetype end = text.size();
            for (qsizetype j = i + 1; j < m_clauses.size(); ++j) {
                if (m_clauses[j].level <= clause.level) {
                    end = m_clauses[j].start;
                    break;
                }
            }
            clause.end = trimmedEnd(end, clause.start);
        }
    }

    const Document& m_document;
    QList<Clause> m_clauses;
    QList<Open> m_stack;
    QHash<QString, QList<int>> m_lastByFamily;
    int m_headingLine = -1;
    bool m_seenBody = false;
};

} // namespace

QList<Clause> segmentClauses(const Document& document)
{
    return Segmenter(document).run();
}

} // namespace cw
