#include "app/heads/governing_law.h"

#include "app/heads/field_extractors.h"
#include "app/heads/jurisdiction_names.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>

namespace cw::heads {

namespace {

using QRE = QRegularExpression;
constexpr auto kCi = QRE::CaseInsensitiveOption;

// How contracts name a jurisdiction's law by adjective ("English law", "Italian Law").
const QHash<QString, QString>& lawAdjectives()
{
    static const QHash<QString, QString> table
        = { { "english", "England" }, { "scottish", "Scotland" }, { "irish", "Ireland" },
              { "italian", "Italy" }, { "german", "Germany" }, { "french", "France" },
              { "swiss", "Switzerland" }, { "dutch", "Netherlands" }, { "belgian", "Belgium" },
              { "austrian", "Austria" }, { "spanish", "Spain" }, { "swedish", "Sweden" },
              { "danish", "Denmark" }, { "norwegian", "Norway" }, { "finnish", "Finland" },
              { "chinese", "China" }, { "japanese", "Japan" }, { "korean", "South Korea" },
              { "taiwanese", "Taiwan" }, { "indian", "India" }, { "israeli", "Israel" },
              { "singaporean", "Singapore" }, { "canadian", "Canada" },
              { "australian", "Australia" }, { "mexican", "Mexico" }, { "brazilian", "Brazil" } };
    return table;
}

// Every jurisdiction name and law adjective, longest first, as one alternation. A name may
// follow "of" with no space ("laws ofTexas" in OCR text).
const QRE& mentionPattern()
{
    static const QRE re = [] {
        QStringList names;
        for (const auto& [alias, canonical] : jurisdictionAliases())
            names.append(alias);
        for (auto it = lawAdjectives().begin(); it != lawAdjectives().end(); ++it)
            names.append(it.key());
        std::sort(names.begin(), names.end(),
            [](const QString& a, const QString& b) { return a.size() > b.size(); });
        QStringList escaped;
        for (const QString& n : names) {
            QString e = QRE::escape(n);
            e.replace(QStringLiteral("\\ "), QStringLiteral("\\s+"));
            e.replace(QStringLiteral("\\'"), QStringLiteral("['\u2019]"));
            escaped.append(e);
        }
        QRE r(QStringLiteral("(?:(?<![A-Za-z])|(?<=of))(%1)(?![A-Za-z])").arg(escaped.join('|')),
            kCi);
        r.optimize();
        return r;
    }();
    return re;
}

enum class Cue { None, LawsOf, NamedLaw };

// What the words just before (and after) a mention say about it.
Cue cueFor(const QString& before, const QString& after, bool adjective)
{
    // "laws of the State of", "law of", "laws in force in", "laws ofthe Siate of"; also with
    // words between the law and its jurisdiction ("laws and judicial decisions of", "laws,
    // other than choice of law rules, of", "laws in the State of", "internal laws State of").
    static const QString kind = QStringLiteral(
        "(?:State|Siate|Commonwealth|Province|Republic|Kingdom|Federal\\s+Republic|Territory)"
        "\\s*of\\s*(?:the\\s+)?");
    static const QRE lawsOf(
        QStringLiteral("\\b(?:laws?|legislation)(?:\\s+and\\s+(?:\\w+\\s+)?(?:decisions|"
                       "regulations|statutes|rules|principles)|\\s*,[^.;,]{0,80},)?\\s*(?:(?:in\\s+"
                       "force\\s+in|in\\s+effect\\s+in|applicable\\s+in|prevailing\\s+in|of|in)\\s*"
                       "(?:the\\s*)?(?:%1)?|(?:the\\s+)?%1)$")
            .arg(kind),
        kCi);
    // "... laws of the United States and of the Commonwealth of", "... and of Switzerland".
    static const QRE andOf(
        QStringLiteral("\\blaws?\\b[^.;]{0,120}\\b(?:and|or)\\s+(?:of\\s+(?:the\\s+)?(?:%1)?|"
                       "(?:the\\s+)?%1)$")
            .arg(kind),
        kCi);
    static const QRE lawAfter(QStringLiteral("^\\s*(?:laws?|legislation)\\b"), kCi);
    if (!adjective && (lawsOf.match(before).hasMatch() || andOf.match(before).hasMatch()))
        return Cue::LawsOf;
    if (lawAfter.match(after).hasMatch())
        return Cue::NamedLaw;
    return Cue::None;
}

// The sentence so far: `before` cut after its last sentence end.
QString sentenceBefore(const QString& text, qsizetype from, qsizetype at)
{
    const qsizetype start = std::max<qsizetype>(from, at - 200);
    QString before = text.mid(start, at - start);
    static const QRE end(QStringLiteral("(?:[.;]\\s+(?=[A-Z(\\d])|\\n\\s*\\n)"));
    qsizetype cut = -1;
    auto it = end.globalMatch(before);
    while (it.hasNext())
        cut = it.next().capturedEnd();
    return cut > 0 ? before.mid(cut) : before;
}

struct Mention {
    Located<QString> where;
    int rank; // 0: plainly chosen; 1: the United States; 2 and 3: in a carve-out
};

// Every mention of a jurisdiction's law in [from, to), in text order, with its rank.
QList<Mention> lawMentions(const QString& text, qsizetype from, qsizetype to)
{
    static const QRE incorporation(
        QStringLiteral("(?:organi[sz]ed|incorporated|existing|formed|registered|chartered|"
                       "good\\s+standing)[^.;]{0,40}\\blaws?\\b[^.;]{0,40}$"),
        kCi);
    static const QRE carveOut(
        QStringLiteral("conflicts?\\s+of\\s+laws?|choice\\s+of\\s+laws?|without\\s+regard|"
                       "without\\s+(?:giving\\s+)?effect|other\\s+than|rather\\s+than|"
                       "any\\s+other\\s+jurisdiction"),
        kCi);
    QList<Mention> mentions;
    auto it = mentionPattern().globalMatch(QStringView(text).mid(from, to - from));
    while (it.hasNext()) {
        const auto m = it.next();
        const qsizetype at = from + m.capturedStart(1);
        const qsizetype end = from + m.capturedEnd(1);
        const QString name = m.captured(1);
        const auto adjective = lawAdjectives().constFind(name.toLower());
        const bool isAdjective = adjective != lawAdjectives().constEnd();
        const QString before = sentenceBefore(text, from, at);
        const QString after = text.mid(end, std::min<qsizetype>(20, to - end));
        const Cue cue = cueFor(before, after, isAdjective);
        if (cue == Cue::None || incorporation.match(before).hasMatch())
            continue;
        const QString law = isAdjective ? adjective.value() : normaliseJurisdiction(name);
        if (law.isEmpty())
            continue;
        // A carve-out names the law that does not govern ("without regard to the conflict
        // of laws rules of any other state"); the United States yields to a state it is
        // named with ("federal law and the laws of Texas").
        const int rank = (carveOut.match(before).hasMatch() ? 2 : 0) + (law == "United States");
        mentions.append({ { law, at, end }, rank });
    }
    // "made in the State of California and governed by the laws thereof".
    static const QRE thereof(QStringLiteral("\\blaws?\\s+thereof"), kCi);
    static const QRE stateOf(
        QStringLiteral("\\b(?:State|Commonwealth|Province)\\s+of\\s+([A-Za-z][A-Za-z ]{2,30})"),
        kCi);
    if (mentions.isEmpty() && thereof.match(QStringView(text).mid(from, to - from)).hasMatch()) {
        const auto m = stateOf.match(QStringView(text).mid(from, to - from));
        if (m.hasMatch()) {
            const QString law = normaliseJurisdiction(m.captured(1));
            if (!law.isEmpty())
                mentions.append({ { law, from + m.capturedStart(1), from + m.capturedEnd(1) }, 0 });
        }
    }
    return mentions;
}

} // namespace

QList<Located<QString>> findGoverningLaw(const QString& text, qsizetype from, qsizetype to)
{
    to = to < 0 || to > text.size() ? text.size() : to;
    QList<Mention> mentions = lawMentions(text, from, to);
    std::stable_sort(mentions.begin(), mentions.end(),
        [](const Mention& a, const Mention& b) { return a.rank < b.rank; });
    QList<Located<QString>> out;
    for (const Mention& m : mentions)
        out.append(m.where);
    return out;
}

QStringList chosenJurisdictions(const QString& text, qsizetype from, qsizetype to)
{
    to = to < 0 || to > text.size() ? text.size() : to;
    const QList<Mention> mentions = lawMentions(text, from, to);
    int bestRank = 4;
    for (const Mention& m : mentions)
        bestRank = std::min(bestRank, m.rank);
    QStringList laws;
    for (const Mention& m : mentions) {
        if (m.rank == bestRank && !laws.contains(m.where.value))
            laws.append(m.where.value);
    }
    // A country yields to its own state or province named with it ("the laws of Ontario and
    // the federal laws of Canada applicable therein"): the subdivision says it all.
    QStringList out;
    for (const QString& law : laws) {
        const bool subsumed = std::any_of(laws.begin(), laws.end(), [&](const QString& other) {
            return other.endsWith(QStringLiteral(", ") + law)
                || (law == QLatin1String("United States") && isUsState(other));
        });
        if (!subsumed)
            out.append(law);
    }
    return out;
}

GoverningLawChoice chooseGoverningLaw(const QString& text, const QList<ClauseCandidate>& candidates,
    const std::vector<float>& classifierScores)
{
    static const QRE anyLaw(QStringLiteral("\\blaws?\\b|\\blegislation\\b"), kCi);
    // "governed by", or the law named as what applies ("the law of X applies").
    static const QRE governs(QStringLiteral("\\bgovern|\\b(?:laws?|legislation)\\b[^.;]{0,120}"
                                            "\\b(?:shall\\s+|will\\s+)?appl(?:y|ies)\\b"),
        kCi);
    static const QRE construes(QStringLiteral("\\bconstru|\\binterpret|\\benforced\\b|"
                                              "\\bapplication\\s+of|\\bsubject\\s+to\\s+the"),
        kCi);
    static const QRE forum(QStringLiteral("\\bcourts?\\b|\\bvenue\\b|\\bjurisdiction\\b|"
                                          "\\barbitrat|\\bforum\\b"),
        kCi);
    static const QRE lawHeading(
        QStringLiteral("governing|applicable\\s+law|choice\\s+of\\s+law|\\blaws?\\b"), kCi);
    GoverningLawChoice best;
    for (int i = 0; i < candidates.size(); ++i) {
        const ClauseCandidate& c = candidates[i];
        const QStringView sentence = QStringView(text).mid(c.start, c.end - c.start);
        if (!anyLaw.match(sentence).hasMatch())
            continue;
        const auto laws = findGoverningLaw(text, c.start, c.end);
        if (laws.isEmpty())
            continue;
        double strength = 0.0;
        const bool governed = governs.match(sentence).hasMatch();
        if (governed)
            strength += 1.0;
        else if (construes.match(sentence).hasMatch())
            strength += 0.75;
        if (lawHeading.match(c.heading).hasMatch())
            strength += 0.5;
        if (!governed && forum.match(sentence).hasMatch())
            strength -= 0.5;
        if (size_t(i) < classifierScores.size())
            strength += 0.5 * double(classifierScores[size_t(i)]);
        if (strength > best.strength) {
            best.strength = strength;
            best.law = laws.front().value;
            best.laws = chosenJurisdictions(text, c.start, c.end);
            if (best.laws.isEmpty() || best.laws.front() != best.law)
                best.laws.prepend(best.law);
            best.laws.removeDuplicates();
            best.candidate = i;
        }
    }
    return best;
}

} // namespace cw::heads
