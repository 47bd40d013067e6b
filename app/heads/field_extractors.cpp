#include "app/heads/field_extractors.h"

#include <QJsonArray>
#include <QMap>
#include <QRegularExpression>
#include <algorithm>

namespace cw::heads {

namespace {

using QRE = QRegularExpression;
constexpr auto kCi = QRE::CaseInsensitiveOption;

qsizetype clampTo(const QString& text, qsizetype to)
{
    return to < 0 || to > text.size() ? text.size() : to;
}

int monthNumber(const QString& name)
{
    static const QStringList months
        = { "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec" };
    const QString lower = name.left(3).toLower();
    return int(months.indexOf(lower)) + 1;
}

int fullYear(int year)
{
    if (year < 100)
        return year < 50 ? 2000 + year : 1900 + year;
    return year;
}

const QString kMonth = QStringLiteral(
    "(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\\.?");

int numberWord(const QString& word)
{
    static const QMap<QString, int> words = { { "one", 1 }, { "two", 2 }, { "three", 3 },
        { "four", 4 }, { "five", 5 }, { "six", 6 }, { "seven", 7 }, { "eight", 8 }, { "nine", 9 },
        { "ten", 10 }, { "eleven", 11 }, { "twelve", 12 }, { "fifteen", 15 }, { "eighteen", 18 },
        { "twenty", 20 }, { "thirty", 30 }, { "forty", 40 }, { "forty-five", 45 }, { "fifty", 50 },
        { "sixty", 60 }, { "ninety", 90 }, { "hundred", 100 }, { "one hundred eighty", 180 },
        { "one hundred twenty", 120 }, { "a", 1 }, { "an", 1 } };
    return words.value(word.toLower().simplified(), 0);
}

} // namespace

int Duration::days() const
{
    if (unit == QLatin1String("year"))
        return count * 365;
    if (unit == QLatin1String("month"))
        return count * 30;
    if (unit == QLatin1String("week"))
        return count * 7;
    return count;
}

QList<Located<QDate>> findDates(const QString& text, qsizetype from, qsizetype to)
{
    static const QRE re(
        QStringLiteral(
            "\\b(?:(?<m1>%1)\\s*(?<d1>\\d{1,2})(?:st|nd|rd|th)?\\s*,?\\s*(?<y1>\\d{4})"
            "|(?<d2>\\d{1,2})(?:st|nd|rd|th)?\\s+(?:day\\s+of\\s+)?(?<m2>%1)\\s*,?\\s*(?<y2>\\d{4})"
            "|(?<m3>\\d{1,2})([/-])(?<d3>\\d{1,2})\\g{-2}(?<y3>\\d{4}|\\d{2})\\b"
            "|(?<y4>\\d{4})-(?<m4>\\d{2})-(?<d4>\\d{2}))")
            .arg(kMonth),
        kCi);
    QList<Located<QDate>> out;
    to = clampTo(text, to);
    auto it = re.globalMatch(QStringView(text).mid(from, to - from));
    while (it.hasNext()) {
        const auto m = it.next();
        int y = 0, mo = 0, d = 0;
        if (m.hasCaptured("m1")) {
            mo = monthNumber(m.captured("m1")), d = m.captured("d1").toInt(),
            y = m.captured("y1").toInt();
        } else if (m.hasCaptured("m2")) {
            mo = monthNumber(m.captured("m2")), d = m.captured("d2").toInt(),
            y = m.captured("y2").toInt();
        } else if (m.hasCaptured("m3")) {
            mo = m.captured("m3").toInt(), d = m.captured("d3").toInt(),
            y = fullYear(m.captured("y3").toInt());
        } else {
            y = m.captured("y4").toInt(), mo = m.captured("m4").toInt(),
            d = m.captured("d4").toInt();
        }
        const QDate date(y, mo, d);
        // EDGAR page footers ("Source: ACME INC, 8-K, 8/15/2019") date the filing, not the
        // contract.
        const qsizetype at = from + m.capturedStart();
        const qsizetype lineStart = text.lastIndexOf('\n', at) + 1;
        if (QStringView(text).mid(lineStart, at - lineStart).contains(QLatin1String("Source:")))
            continue;
        if (date.isValid() && y >= 1900 && y <= 2200)
            out.append({ date, from + m.capturedStart(), from + m.capturedEnd() });
    }
    return out;
}

std::optional<QDate> parseShortDate(const QString& answer)
{
    static const QRE re(QStringLiteral("^\\s*(\\d{1,2})/(\\d{1,2})/(\\d{2,4})\\s*$"));
    const auto m = re.match(answer);
    if (!m.hasMatch())
        return std::nullopt;
    const QDate date(fullYear(m.captured(3).toInt()), m.captured(1).toInt(), m.captured(2).toInt());
    if (!date.isValid())
        return std::nullopt;
    return date;
}

std::optional<Located<QString>> findDocumentName(const QString& text)
{
    static const QRE caps(
        QStringLiteral("[A-Z0-9][A-Z0-9&,.'\u2019()/ "
                       "-]{0,100}?\\b(?:AGREEMENT|CONTRACT|AMENDMENT|ADDENDUM|LICENSE|LICENCE|"
                       "LEASE|MEMORANDUM OF UNDERSTANDING|ARRANGEMENT|PLAN|DEED|TERMS AND "
                       "CONDITIONS)(?:\\s+(?:NO\\.?\\s*\\d+|"
                       "#\\s*\\d+|OF\\s+[A-Z][A-Z ]{0,40}|FOR\\s+[A-Z][A-Z ]{0,40}|TO\\s+[A-Z][A-Z "
                       "]{0,40}AGREEMENT))?"));
    static const QRE titled(QStringLiteral("(?:[A-Z][\\w&'\u2019-]*\\s+){0,8}?(?:Agreement|"
                                           "Contract|Amendment|Addendum|License|Lease)\\b"
                                           "(?:\\s+(?:No\\.?\\s*\\d+|#\\s*\\d+|to\\s+(?:the\\s+)?(?"
                                           ":[A-Z][\\w-]*\\s+){0,5}Agreement))?"));
    const qsizetype window = std::min<qsizetype>(text.size(), 2000);
    const QStringView head = QStringView(text).left(window);
    static const QRE skip(QStringLiteral("^(?:EXHIBIT|Exhibit|CONFIDENTIAL|Confidential|Source:)"));
    for (const QRE* re : { &caps, &titled }) {
        auto it = re->globalMatch(head);
        while (it.hasNext()) {
            const auto m = it.next();
            QString value = m.captured(0).trimmed();
            qsizetype start = m.capturedStart();
            while (value.startsWith("EXHIBIT") || value.startsWith("Exhibit")) {
                static const QRE exhibit(
                    QStringLiteral("^(?:EXHIBIT|Exhibit)\\s+[0-9A-Z.()-]+\\s*"));
                const auto e = exhibit.match(value);
                if (!e.hasMatch())
                    break;
                value = value.mid(e.capturedLength());
                start += e.capturedLength();
            }
            if (value.size() < 6 || skip.match(value).hasMatch())
                continue;
            start += text.mid(start).indexOf(value.left(1));
            return Located<QString> { value, start, start + value.size() };
        }
    }
    return std::nullopt;
}

QList<Party> findParties(const QString& text)
{
    static const QRE company(QStringLiteral(
        "\\b((?:[A-Z][A-Za-z0-9&'\u2019.-]*,?\\s+){0,6}?(?:[A-Z][A-Za-z0-9&'\u2019.-]*,?\\s+)"
        "(?:Inc\\.?|Incorporated|Corporation|Corp\\.?|LLC|L\\.L\\.C\\.|Ltd\\.?|Limited|LP|L\\.P\\.|"
        "LLP|"
        "Company|Co\\.|GmbH|AG|S\\.A\\.|SA|N\\.V\\.|B\\.V\\.|plc|PLC|PTY|Pty|S\\.p\\.A\\.|SE|Trust|"
        "Bank|"
        "Partners|Holdings|N\\.A\\.|INC\\.?|CORPORATION|CORP\\.?|LIMITED|COMPANY))(?![A-Za-z])"));
    static const QRE defined(QStringLiteral(
        "^[^()]{0,250}?\\((?:[^()\"\u201C]{0,60})?[\"\u201C]([^\"\u201D]{1,40})[\"\u201D]"));
    static const QRE lead(
        QStringLiteral("^(?:(?:by\\s+and\\s+)?between|and|among|by|with|This|THIS|The|"
                       "the|Agreement|AGREEMENT|is|made|entered|into|of)\\s+"));
    QList<Party> parties;
    const qsizetype window = std::min<qsizetype>(text.size(), 4000);
    auto it = company.globalMatch(QStringView(text).left(window));
    while (it.hasNext() && parties.size() < 6) {
        const auto m = it.next();
        QString name = m.captured(1);
        qsizetype start = m.capturedStart(1);
        for (;;) {
            const auto l = lead.match(name);
            if (!l.hasMatch())
                break;
            name = name.mid(l.capturedLength());
            start += l.capturedLength();
        }
        name = name.trimmed();
        if (name.size() < 3)
            continue;
        bool seen = false;
        for (const Party& p : parties)
            seen = seen || p.name.value.compare(name, Qt::CaseInsensitive) == 0;
        if (seen)
            continue;
        Party party;
        party.name = { name, start, start + name.size() };
        const auto d = defined.match(QStringView(text).mid(m.capturedEnd(1), 300));
        static const QRE notAParty(
            QStringLiteral("agreement|contract|date|term\\b|amendment"), kCi);
        if (d.hasMatch() && !notAParty.match(d.captured(1)).hasMatch()) {
            const qsizetype ds = m.capturedEnd(1) + d.capturedStart(1);
            party.definedName = Located<QString> { d.captured(1), ds, ds + d.capturedLength(1) };
        }
        parties.append(party);
    }
    return parties;
}

std::optional<Located<QDate>> findAgreementDate(const QString& text)
{
    const qsizetype window = std::min<qsizetype>(text.size(), 5000);
    const auto dates = findDates(text, 0, window);
    static const QRE cue(QStringLiteral("(?:dated|as\\s+of|made|entered\\s+into|executed|effective|"
                                        "day\\s+of|on|this)[^.]{0,40}$"),
        kCi);
    for (const auto& d : dates) {
        const qsizetype from = std::max<qsizetype>(0, d.start - 60);
        if (cue.match(text.mid(from, d.start - from)).hasMatch())
            return d;
    }
    if (!dates.isEmpty())
        return dates.front();
    // No date in the opening: the signature block's ("Date: 1/14/02").
    const qsizetype tail = std::max<qsizetype>(window, text.size() - 3000);
    const auto signed_ = findDates(text, tail, text.size());
    if (!signed_.isEmpty())
        return signed_.front();
    return std::nullopt;
}

std::optional<Located<QDate>> findEffectiveDate(const QString& text)
{
    if (auto stated = findStatedEffectiveDate(text))
        return stated;
    return findAgreementDate(text);
}

std::optional<Located<QDate>> findStatedEffectiveDate(const QString& text)
{
    static const QRE cue(QStringLiteral("(?:effective\\s+(?:as\\s+of\\s+|on\\s+|from\\s+)?|"
                                        "[\"\u201C]Effective\\s+Date[\"\u201D][^.]{0,60}?)$"),
        kCi);
    const auto dates = findDates(text, 0, std::min<qsizetype>(text.size(), 20000));
    for (const auto& d : dates) {
        const qsizetype from = std::max<qsizetype>(0, d.start - 80);
        if (cue.match(text.mid(from, d.start - from)).hasMatch())
            return d;
    }
    return std::nullopt;
}

QList<Located<Duration>> findDurations(const QString& text, qsizetype from, qsizetype to)
{
    static const QRE re(
        QStringLiteral(
            "\\b(?:([a-z]+(?:[- "
            "][a-z]+)?)\\s*)?\\(?(\\d{1,4})?\\)?\\s*(?:business\\s+|calendar\\s+|consecutive\\s+)?"
            "(day|week|month|year)s?\\b"),
        kCi);
    QList<Located<Duration>> out;
    to = clampTo(text, to);
    auto it = re.globalMatch(QStringView(text).mid(from, to - from));
    while (it.hasNext()) {
        const auto m = it.next();
        int count = m.captured(2).toInt();
        if (count == 0)
            count = numberWord(m.captured(1));
        if (count == 0 && m.captured(1).contains(' '))
            count = numberWord(m.captured(1).section(' ', -1));
        if (count <= 0)
            continue;
        Duration d { count, m.captured(3).toLower() };
        out.append({ d, from + m.capturedStart(), from + m.capturedEnd() });
    }
    return out;
}

QList<Located<Amount>> findAmounts(const QString& text, qsizetype from, qsizetype to)
{
    static const QRE re(QStringLiteral("(?:(US\\$|U\\.S\\.\\s*\\$|\\$|USD|EUR|€|£|GBP|RMB|CAD|C\\$)"
                                       "\\s*(\\d[\\d,]*(?:\\.\\d+)?)\\s*(million|billion|thousand)?"
                                       "|(\\d[\\d,]*(?:\\.\\d+)?)\\s*(million|billion|thousand)?"
                                       "\\s*(?:U\\.S\\.\\s*)?(dollars|euros|pounds))"),
        kCi);
    QList<Located<Amount>> out;
    to = clampTo(text, to);
    auto it = re.globalMatch(QStringView(text).mid(from, to - from));
    while (it.hasNext()) {
        const auto m = it.next();
        const bool symbolFirst = m.hasCaptured(2);
        QString number = m.captured(symbolFirst ? 2 : 4);
        number.remove(',');
        double value = number.toDouble();
        const QString scale = m.captured(symbolFirst ? 3 : 5).toLower();
        value *= scale == "million" ? 1e6
            : scale == "billion"    ? 1e9
            : scale == "thousand"   ? 1e3
                                    : 1.0;
        QString unit = m.captured(symbolFirst ? 1 : 6).toUpper();
        QString currency = "USD";
        if (unit == "EUR" || unit == "€" || unit == "EUROS")
            currency = "EUR";
        else if (unit == "£" || unit == "GBP" || unit == "POUNDS")
            currency = "GBP";
        else if (unit == "RMB")
            currency = "CNY";
        else if (unit == "CAD" || unit == "C$")
            currency = "CAD";
        out.append(
            { Amount { value, currency }, from + m.capturedStart(), from + m.capturedEnd() });
    }
    return out;
}

QList<Located<QString>> findDefinedTerms(const QString& text, qsizetype from, qsizetype to)
{
    static const QRE re(QStringLiteral("(?:\\((?:the\\s+|each\\s+a\\s+|collectively,?\\s+)?|^|\\n|"
                                       "\\.\\s+)[\"\u201C]([A-Z][^\"\u201D]{0,60})[\"\u201D]"
                                       "|[\"\u201C]([A-Z][^\"\u201D]{0,60})[\"\u201D]\\s+(?:"
                                       "shall\\s+)?(?:mean|means|has\\s+the\\s+meaning|refers)"));
    QList<Located<QString>> out;
    to = clampTo(text, to);
    auto it = re.globalMatch(QStringView(text).mid(from, to - from));
    while (it.hasNext()) {
        const auto m = it.next();
        const int g = m.hasCaptured(1) ? 1 : 2;
        QString term = m.captured(g);
        while (!term.isEmpty() && (term.back() == ',' || term.back() == '.'))
            term.chop(1);
        out.append({ term, from + m.capturedStart(g), from + m.capturedStart(g) + term.size() });
    }
    return out;
}

QList<Located<QString>> findCrossReferences(const QString& text, qsizetype from, qsizetype to)
{
    static const QRE re(QStringLiteral(
        "\\b(?:Section|Sections|Article|Clause|Exhibit|Schedule|Annex|Appendix|Paragraph)\\s+"
        "(?:\\d+(?:\\.\\d+)*(?:\\([a-zA-Z0-9]+\\))*|[IVXLC]+\\b|[A-Z](?:-\\d+)?\\b)"));
    QList<Located<QString>> out;
    to = clampTo(text, to);
    auto it = re.globalMatch(QStringView(text).mid(from, to - from));
    while (it.hasNext()) {
        const auto m = it.next();
        out.append({ m.captured(0), from + m.capturedStart(), from + m.capturedEnd() });
    }
    return out;
}

QJsonObject fieldsForFinding(const QString& category, const QString& t)
{
    QJsonObject fields;
    if (category == "Governing Law") {
        const auto laws = findGoverningLaw(t);
        if (!laws.isEmpty())
            fields["law"] = laws.front().value;
    }
    if (category == "Agreement Date" || category == "Effective Date"
        || category == "Expiration Date") {
        const auto dates = findDates(t);
        if (!dates.isEmpty())
            fields["date"] = dates.front().value.toString(Qt::ISODate);
        if (category == "Expiration Date" && t.contains("perpetu", Qt::CaseInsensitive))
            fields["perpetual"] = true;
    }
    const auto durations = findDurations(t);
    if (!durations.isEmpty()) {
        QJsonArray list;
        for (const auto& d : durations)
            list.append(QJsonObject {
                { "count", d.value.count }, { "unit", d.value.unit }, { "days", d.value.days() } });
        fields["durations"] = list;
        const Duration& first = durations.front().value;
        if (category == "Notice Period To Terminate Renewal"
            || category == "Termination For Convenience")
            fields["notice_days"] = first.days();
        if (category == "Renewal Term") {
            fields["renewal_term"] = QStringLiteral("%1 %2%3")
                                         .arg(first.count)
                                         .arg(first.unit)
                                         .arg(first.count == 1 ? "" : "s");
            fields["successive"] = t.contains("successive", Qt::CaseInsensitive);
            for (const auto& d : durations) {
                static const QRE notice(QStringLiteral("notice|prior|before|in\\s+advance"), kCi);
                const QString around
                    = t.mid(std::max<qsizetype>(0, d.start - 40), d.end - d.start + 80);
                if (notice.match(around).hasMatch() && d.start != durations.front().start)
                    fields["notice_days"] = d.value.days();
            }
        }
        if (category == "Non-Compete" || category == "No-Solicit Of Employees"
            || category == "No-Solicit Of Customers" || category == "Warranty Duration")
            fields["duration_days"] = first.days();
        if (category == "Cap On Liability") {
            static const QRE months(
                QStringLiteral("(\\d+|twelve|six|three|twenty-four)\\)?\\s*\\(?\\d*\\)?\\s*months?["
                               "^.]{0,80}(?:fees|paid|payable|amounts)"),
                kCi);
            const auto m = months.match(t);
            if (m.hasMatch()) {
                const int n
                    = m.captured(1).toInt() > 0 ? m.captured(1).toInt() : numberWord(m.captured(1));
                if (n == 0 && m.captured(1).compare("twenty-four", Qt::CaseInsensitive) == 0)
                    fields["cap_months_of_fees"] = 24;
                else
                    fields["cap_months_of_fees"] = n;
            }
        }
    }
    const auto amounts = findAmounts(t);
    if (!amounts.isEmpty()) {
        QJsonArray list;
        for (const auto& a : amounts)
            list.append(
                QJsonObject { { "value", a.value.value }, { "currency", a.value.currency } });
        fields["amounts"] = list;
    }
    const auto refs = findCrossReferences(t);
    if (!refs.isEmpty()) {
        QJsonArray list;
        for (const auto& r : refs)
            list.append(r.value);
        fields["cross_references"] = list;
    }
    const auto terms = findDefinedTerms(t);
    if (!terms.isEmpty()) {
        QJsonArray list;
        for (const auto& r : terms)
            list.append(r.value);
        fields["defined_terms"] = list;
    }
    return fields;
}

} // namespace cw::heads
