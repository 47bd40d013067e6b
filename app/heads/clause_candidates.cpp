#include "app/heads/clause_candidates.h"

#include <QRegularExpression>
#include <QSet>
#include <algorithm>

namespace cw::heads {

namespace {

constexpr qsizetype kLongSentence = 700;
constexpr qsizetype kMaxCandidate = 1500;
constexpr qsizetype kMinCandidate = 20;

bool isAbbreviation(const QString& text, qsizetype dot)
{
    // The word just before the period.
    qsizetype begin = dot;
    while (begin > 0 && (text.at(begin - 1).isLetterOrNumber() || text.at(begin - 1) == '.'))
        --begin;
    const QString word = text.mid(begin, dot - begin).toLower();
    if (word.isEmpty())
        return false;
    static const QSet<QString> kAbbreviations = { "inc", "corp", "co", "ltd", "llc", "no", "nos",
        "sec", "mr", "mrs", "ms", "dr", "st", "u.s", "e.g", "i.e", "etc", "vs", "v", "jr", "sr",
        "n.a", "l.p", "s.a", "b.v", "n.v", "art", "para", "approx", "fig", "dept", "ave", "blvd",
        "p.o", "s.p.a", "a.g", "g.m.b.h", "pty", "plc", "int'l", "intl", "u.s.a", "u.k", "ph.d",
        "esq", "min", "max", "cf", "sect", "ref", "rev", "tel", "fax", "l.l.c", "p.c", "ste",
        "assn", "bros", "mfg" };
    if (kAbbreviations.contains(word))
        return true;
    if (word.size() == 1 && word.at(0).isLetter())
        return true; // initials, (a). and list letters
    // Section numbers: "Section 2.", "12.3." followed by a heading are split elsewhere.
    bool allDigits
        = std::all_of(word.begin(), word.end(), [](QChar c) { return c.isDigit() || c == '.'; });
    return allDigits && word.size() <= 6;
}

// Positions where a new candidate begins.
QList<qsizetype> boundaries(const QString& text)
{
    QList<qsizetype> cuts { 0 };
    const qsizetype n = text.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = text.at(i);
        if (c == '\n') {
            // Paragraph break, or a line break after a sentence end or a short line.
            qsizetype j = i + 1;
            bool blank = false;
            while (j < n && text.at(j).isSpace()) {
                if (text.at(j) == '\n')
                    blank = true;
                ++j;
            }
            qsizetype lineStart = text.lastIndexOf('\n', i - 1) + 1;
            const QString line = text.mid(lineStart, i - lineStart).trimmed();
            const bool ends = !line.isEmpty() && QStringLiteral(".;:").contains(line.back());
            if (blank || ends || line.size() < 60)
                cuts.append(j);
            i = j - 1;
            continue;
        }
        if (c == '.' || c == '?' || c == '!') {
            qsizetype j = i + 1;
            while (j < n && (text.at(j) == '"' || text.at(j) == QChar(0x201D) || text.at(j) == ')'))
                ++j;
            if (j >= n || !text.at(j).isSpace())
                continue;
            while (j < n && text.at(j).isSpace())
                ++j;
            if (j >= n)
                continue;
            const QChar next = text.at(j);
            const bool startsSentence = next.isUpper() || next.isDigit() || next == '('
                || next == '"' || next == QChar(0x201C) || next == '[';
            if (startsSentence && !(c == '.' && isAbbreviation(text, i)))
                cuts.append(j);
            else if (startsSentence && c == '.' && next.isUpper()) {
                // "2. Term." after a section number: a number then a heading starts here.
                qsizetype begin = i;
                while (begin > 0 && (text.at(begin - 1).isDigit() || text.at(begin - 1) == '.'))
                    --begin;
                if (begin < i && (begin == 0 || text.at(begin - 1).isSpace()))
                    cuts.append(begin);
            }
        }
    }
    cuts.append(n);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    return cuts;
}

// Splits [start, end) at "; " (then ", ") so no piece exceeds the limits.
void splitLong(
    const QString& text, qsizetype start, qsizetype end, QList<QPair<qsizetype, qsizetype>>& out)
{
    if (end - start <= kLongSentence) {
        out.append({ start, end });
        return;
    }
    qsizetype pieceStart = start;
    for (qsizetype i = start; i < end - 1; ++i) {
        const bool semicolon = text.at(i) == ';' && text.at(i + 1).isSpace();
        const bool comma
            = text.at(i) == ',' && text.at(i + 1).isSpace() && i - pieceStart > kMaxCandidate;
        if ((semicolon && i - pieceStart > 150) || comma) {
            out.append({ pieceStart, i + 1 });
            pieceStart = i + 2;
        }
    }
    if (pieceStart < end)
        out.append({ pieceStart, end });
}

bool looksLikeHeading(const QString& s)
{
    if (s.size() > 90 || s.size() < 3)
        return false;
    static const QRegularExpression kNumbered(
        QStringLiteral(
            "^(?:(?:section|article|clause)\\s+)?[0-9IVXivx]{1,4}(?:\\.[0-9]{1,3})*[.)]?\\s+"
            "([A-Z][A-Za-z,&'/ -]{2,70})[.:]?$"),
        QRegularExpression::CaseInsensitiveOption);
    if (kNumbered.match(s).hasMatch())
        return true;
    int letters = 0;
    int upper = 0;
    for (QChar c : s) {
        if (c.isLetter()) {
            ++letters;
            if (c.isUpper())
                ++upper;
        }
    }
    return letters >= 4 && upper == letters && s.count(' ') < 10;
}

QString headingWords(const QString& s)
{
    static const QRegularExpression kLead(
        QStringLiteral(
            "^(?:(?:section|article|clause)\\s+)?[0-9IVXivx]{1,4}(?:\\.[0-9]{1,3})*[.)]?\\s+"),
        QRegularExpression::CaseInsensitiveOption);
    QString h = s;
    h.remove(kLead);
    while (!h.isEmpty() && (h.back() == '.' || h.back() == ':'))
        h.chop(1);
    return h.trimmed();
}

} // namespace

QList<ClauseCandidate> buildCandidates(const QString& text, const QList<Clause>& clauses)
{
    const QList<qsizetype> cuts = boundaries(text);
    QList<QPair<qsizetype, qsizetype>> pieces;
    for (qsizetype k = 0; k + 1 < cuts.size(); ++k) {
        qsizetype s = cuts[k];
        qsizetype e = cuts[k + 1];
        while (s < e && text.at(s).isSpace())
            ++s;
        while (e > s && text.at(e - 1).isSpace())
            --e;
        if (e > s)
            splitLong(text, s, e, pieces);
    }
    QList<ClauseCandidate> candidates;
    QString heading;
    qsizetype pendingStart = -1;
    for (const auto& [s, e] : pieces) {
        const QString piece = text.mid(s, e - s);
        ClauseCandidate c;
        c.start = pendingStart >= 0 ? pendingStart : s;
        c.end = e;
        pendingStart = -1;
        if (looksLikeHeading(piece)) {
            heading = headingWords(piece);
            c.isHeading = true;
        } else if (e - c.start < kMinCandidate) {
            pendingStart = c.start; // glue "1." or "(a)" to what follows
            continue;
        }
        c.heading = heading;
        candidates.append(c);
    }
    if (pendingStart >= 0 && !candidates.isEmpty())
        candidates.back().end = text.size();
    // The innermost clause holding each candidate. Headings stay those read from the text
    // so that training (on text alone) and use (with the segmenter's clauses) agree.
    if (!clauses.isEmpty()) {
        int k = 0;
        for (ClauseCandidate& c : candidates) {
            int inner = -1;
            for (; k < clauses.size() && clauses[k].start <= c.start; ++k) { }
            for (int j = std::min<int>(k, int(clauses.size())) - 1; j >= 0; --j) {
                if (clauses[j].start <= c.start && clauses[j].end >= c.end) {
                    inner = j;
                    break;
                }
                if (clauses[j].level == 0 && clauses[j].end < c.start)
                    break;
            }
            c.clauseIndex = inner;
        }
    }
    return candidates;
}

QList<qsizetype> nonSpacePrefix(const QString& text)
{
    QList<qsizetype> prefix(text.size() + 1, 0);
    for (qsizetype i = 0; i < text.size(); ++i)
        prefix[i + 1] = prefix[i] + (text.at(i).isSpace() ? 0 : 1);
    return prefix;
}

bool spansMatch(
    const QList<qsizetype>& prefix, qsizetype a0, qsizetype a1, qsizetype b0, qsizetype b1)
{
    const qsizetype n = prefix.size() - 1;
    auto clamp = [n](qsizetype v) { return std::clamp<qsizetype>(v, 0, n); };
    a0 = clamp(a0), a1 = clamp(a1), b0 = clamp(b0), b1 = clamp(b1);
    const qsizetype lo = std::max(a0, b0);
    const qsizetype hi = std::min(a1, b1);
    if (hi <= lo)
        return false;
    const qsizetype overlap = prefix[hi] - prefix[lo];
    const qsizetype shorter = std::min(prefix[a1] - prefix[a0], prefix[b1] - prefix[b0]);
    return shorter > 0 && 2 * overlap >= shorter;
}

} // namespace cw::heads
