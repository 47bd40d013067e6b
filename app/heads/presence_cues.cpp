#include "app/heads/presence_cues.h"

#include "app/heads/document_findings.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>

namespace cw::heads {

namespace {

const QHash<QString, QRegularExpression>& cues()
{
    static const QHash<QString, QRegularExpression> table = [] {
        const auto options = QRegularExpression::CaseInsensitiveOption
            | QRegularExpression::UseUnicodePropertiesOption;
        QHash<QString, QRegularExpression> t;
        auto add = [&](const char* category, const char* pattern) {
            QRegularExpression re(QString::fromUtf8(pattern), options);
            Q_ASSERT(re.isValid());
            re.optimize();
            t.insert(QString::fromUtf8(category), re);
        };
        add("Expiration Date",
            "\\b(?:initial\\s+term|term\\s+of\\s+this\\s+agreement|shall\\s+(?:expire|terminate)"
            "\\s+(?:on|at)|until\\s+(?:the\\s+)?(?:\\d|[a-z]+\\s+\\(\\d+\\)\\s+(?:anniversary|"
            "years?)))");
        add("Renewal Term",
            "\\b(?:automatically\\s+(?:renew|extend)|renew(?:ed|al)?\\s+for\\s+(?:an?\\s+)?"
            "(?:additional|successive|further)|successive\\s+(?:\\w+\\s+){0,3}(?:periods?|terms?)"
            "|evergreen)");
        add("Notice Period To Terminate Renewal",
            "\\b(?:renew|extend)\\w*[^.]{0,200}\\bunless\\b[^.]{0,150}\\bnotice"
            "|\\bnotice\\s+of\\s+(?:its\\s+)?(?:intent\\w*\\s+)?(?:not\\s+to\\s+renew|non-?"
            "renewal)");
        add("Governing Law",
            "\\b(?:governed\\s+by|construed\\s+(?:and\\s+enforced\\s+)?in\\s+accordance\\s+with|"
            "governing\\s+law)");
        add("Most Favored Nation",
            "\\bmost\\s+favou?red|\\b(?:no|not)\\s+less\\s+favou?rable"
            "|\\bmore\\s+favou?rable\\s+(?:terms|pricing|prices?|conditions)"
            "|\\b(?:lowest|best)\\s+(?:net\\s+)?price"
            // Terms no better for others, or fees no higher than others are charged.
            "|\\bmore\\s+favou?rable\\s+(?:\\w+\\s+){0,4}than"
            "|\\b(?:higher|greater)\\s+(?:\\w+\\s+)?(?:fees?|prices?|rates?|royalt\\w*"
            "|charges?)\\s+than"
            "[^.]{0,120}\\b(?:other|any|similarly)");
        add("Competitive Restriction Exception",
            "\\bnotwithstanding\\s+(?:the\\s+foregoing|anything)[^.]{0,200}\\b(?:compet|exclusiv|"
            "solicit)|\\b(?:shall|will)\\s+not\\s+(?:be\\s+deemed\\s+to\\s+)?(?:prohibit|restrict|"
            "prevent)");
        add("Non-Compete",
            "\\bnon-?compet|\\bnot\\s+(?:to\\s+)?(?:directly\\s+or\\s+indirectly\\s+)?(?:compete|"
            "engage)|\\bcompetitive\\s+(?:products?|business|activit)|\\bcompeting\\s+products?");
        add("Exclusivity",
            "\\bexclusiv(?:e|ely|ity)\\b(?![- "
            "]?(?:of|property))|\\bsole\\s+(?:and\\s+exclusive\\s+)?"
            "(?:supplier|distributor|source|provider)|\\ball\\s+(?:of\\s+)?its\\s+requirements");
        add("No-Solicit Of Customers",
            "\\bsolicit\\w*[^.]{0,150}\\b(?:customers?|clients?|accounts?|suppliers?)\\b|"
            "\\b(?:divert|circumvent)\\w*[^.]{0,100}\\b(?:customers?|clients?|business)");
        add("No-Solicit Of Employees",
            "\\b(?:solicit|recruit|hire|employ|induce)\\w*[^.]{0,150}\\b(?:employees?|personnel|"
            "staff|consultants?)\\b|\\bnon-?solicit");
        add("Non-Disparagement",
            // Not "defamatory": content warranties use it, and they bind no one's speech.
            "\\bdisparag|\\bderogatory|\\bdisrepute|\\bnegative\\s+(?:statements?|comments?"
            "|remarks?)");
        add("Termination For Convenience",
            "\\bterminat\\w*[^.]{0,150}\\b(?:for\\s+(?:its\\s+)?convenience|without\\s+cause|"
            "for\\s+"
            "any\\s+reason|for\\s+no\\s+reason|at\\s+any\\s+time[^.]{0,80}\\bnotice)");
        add("Rofr/Rofo/Rofn",
            "\\bright\\s+of\\s+first\\s+(?:refusal|offer|negotiation)|\\bfirst\\s+right\\s+to\\s+"
            "(?:negotiate|purchase|acquire|offer)|\\bright\\s+of\\s+first\\b");
        add("Change Of Control",
            "\\bchange\\s+(?:of|in)\\s+(?:the\\s+)?control|\\bsubstantially\\s+all\\s+of\\s+"
            "(?:its|the)\\s+(?:assets|business)|\\bmerger|\\bby\\s+operation\\s+of\\s+law");
        add("Anti-Assignment",
            "\\bassign\\w*[^.]{0,200}\\b(?:without\\s+(?:the\\s+)?(?:prior\\s+)?(?:written\\s+)?"
            "consent|prior\\s+written\\s+consent)|\\bmay\\s+not\\s+(?:be\\s+)?assign");
        add("Revenue/Profit Sharing",
            "\\broyalt(?:y|ies)|\\brevenue\\s+shar|\\bprofit\\s+shar|\\b(?:percent|%)\\s*(?:\\)\\s*"
            ")?"
            "of\\s+(?:the\\s+)?(?:net|gross)\\s+(?:sales|revenues?|profits?|receipts)|"
            "\\bcommissions?");
        // Prices held where they are, increases capped, made seldom or tied to an index, or
        // resale prices bounded: the ways supply and licence agreements restrict what a party
        // may charge (a fee that "shall not exceed" an amount is a price, not a restriction).
        add("Price Restrictions",
            "\\b(?:pric|fee|rate)\\w*[^.]{0,80}\\b(?:shall|will|may)\\s+not\\s+(?:be\\s+)?"
            "(?:increase|raise)"
            "|\\b(?:pric|fee|rate)\\w*[^.]{0,60}\\b(?:shall|will)\\s+(?:remain|be)\\s+(?:firm"
            "|fixed|constant|unchanged)"
            "|\\b(?:shall|will|may)\\s+not\\s+(?:\\w+\\s+){0,2}(?:raise|increase)\\s+(?:the\\s+"
            "|its\\s+|any\\s+)?(?:pric|fee|rate)"
            "|\\b(?:firm|fixed)\\s+(?:unit\\s+)?pric"
            "|\\b(?:price|fee|rate)\\s+increases?[^.]{0,100}\\b(?:not\\s+(?:to\\s+)?exceed"
            "|no\\s+more\\s+than|limited\\s+to|capped|at\\s+most)"
            "|\\b(?:not\\s+to\\s+exceed|no\\s+more\\s+than)[^.]{0,60}\\bincrease"
            "|\\b(?:below|less\\s+than)\\s+(?:the\\s+)?(?:minimum\\s+)?(?:resale|advertised"
            "|list)\\s+price"
            "|\\b(?:increase|adjust|change|raise)\\w*[^.]{0,120}\\b(?:not\\s+more\\s+(?:often"
            "|frequently)\\s+than"
            "|(?:only\\s+)?once\\s+(?:per|a|each|every|in\\s+any)\\s+(?:\\w+\\s+)?(?:year|twelve"
            "|12))"
            "|\\b(?:pric|fee|rate)\\w*[^.]{0,150}\\b(?:increase|decrease|adjust)\\w*[^.]{0,100}"
            "\\b(?:cpi|consumer\\s+price\\s+index)"
            "|\\b(?:increase|adjust)\\w*[^.]{0,60}\\bnot\\s+(?:to\\s+)?exceed\\w*\\s+"
            "(?:\\w+\\s+)?\\(?\\d+(?:\\.\\d+)?\\)?\\s*(?:%|percent)");
        add("Minimum Commitment",
            "\\bminimum\\s+(?:annual\\s+|monthly\\s+|quarterly\\s+)?(?:purchase|order|quantit|"
            "commitment|volume|royalt|sales|guarantee|payment)|\\b(?:annual|guaranteed)\\s+"
            "minimum");
        add("Volume Restriction",
            "\\b(?:not\\s+(?:more|to\\s+exceed)|in\\s+excess\\s+of|up\\s+to\\s+a\\s+maximum)[^.]{0,"
            "80}"
            "\\b(?:units|quantit|users|copies|hours|days|volume)");
        add("Ip Ownership Assignment",
            "\\bhereby\\s+(?:irrevocably\\s+)?assigns?|\\bwork\\s+made\\s+for\\s+hire|\\bshall\\s+"
            "be\\s+"
            "(?:the\\s+)?(?:sole\\s+(?:and\\s+exclusive\\s+)?)?(?:exclusive\\s+)?property\\s+of"
            "|\\bshall\\s+(?:vest|own)\\b");
        add("Joint Ip Ownership",
            "\\bjointly\\s+(?:own|held|developed|invented|registered)|\\bjoint\\s+(?:ownership|"
            "inventions?|intellectual|owners?|patents?)|\\bco-?own");
        add("License Grant",
            "\\bhereby\\s+grants?[^.]{0,200}\\b(?:licen[cs]e|right\\s+to\\s+use)|\\blicen[cs]e\\s+"
            "is\\s+(?:hereby\\s+)?granted|\\bgrants?\\s+to\\s+\\w+[^.]{0,80}\\blicen[cs]e");
        add("Non-Transferable License",
            "\\bnon-?transferr?able|\\bnon-?assignable|\\bnot\\s+(?:be\\s+)?(?:transferable|"
            "assignable)|\\bnon-?sublicensable");
        add("Affiliate License-Licensor",
            "\\b(?:licensor|\\w+)\\s+(?:and|or)\\s+(?:its|their)\\s+affiliates[^.]{0,150}"
            "\\b(?:grants?|licen[cs]|own|controll?ed)|\\bcontrolled\\s+by\\s+\\w+\\s+or\\s+its\\s+"
            "affiliates");
        add("Affiliate License-Licensee",
            "\\blicen[cs]\\w*[^.]{0,200}\\b(?:to|for)\\s+\\w+\\s+and\\s+its\\s+(?:affiliates"
            "|subsidiaries)"
            "|\\b(?:affiliates|subsidiaries)\\s+(?:of\\s+\\w+\\s+)?(?:may"
            "|shall\\s+have\\s+the\\s+right\\s+to)\\s+(?:use|exercise)"
            // Granted to a party and its affiliates, or sublicensable to them.
            "|\\bgrants?\\s+(?:\\w+\\s+){0,4}?(?:to\\s+)?[\\w&.@-]+(?:\\s+[\\w&.@-]+){0,2},?\\s+"
            "(?:and|together\\s+with|,)\\s*(?:each\\s+of\\s+)?(?:its|their)\\s+(?:\\w+\\s+){0,2}"
            "(?:affiliates|subsidiaries)"
            "|\\bsub-?licen[cs]\\w*[^.]{0,150}\\bto\\s+(?:any\\s+(?:of\\s+)?)?(?:its\\s+"
            "|their\\s+)?(?:\\w+\\s+){0,3}(?:affiliates|subsidiaries)");
        add("Unlimited/All-You-Can-Eat-License",
            "\\bunlimited\\b|\\ball[- ]you[- ]can[- ]eat|\\benterprise[- "
            "]wide|\\bany\\s+number\\s+of\\s+"
            "(?:copies|users|units)");
        add("Irrevocable Or Perpetual License",
            "\\b(?:perpetual|irrevocable)\\b[^.]{0,150}\\b(?:licen[cs]e|right\\s+to\\s+use)");
        add("Source Code Escrow", "\\bescrow\\b");
        add("Post-Termination Services",
            "\\b(?:after|following|upon|subsequent\\s+to)\\s+(?:the\\s+)?(?:expiration|termination|"
            "effective\\s+date\\s+of\\s+termination)[^.]{0,200}\\b(?:shall|will|may)\\s+continue|"
            "\\bsell-?off\\s+period|\\btransition\\s+(?:services|period|assistance)|\\bwind-?down");
        add("Audit Rights",
            "\\baudit|\\binspect\\w*[^.]{0,100}\\b(?:books|records|facilit|premises)|\\bbooks\\s+"
            "and\\s+records");
        add("Uncapped Liability",
            "\\b(?:except|excluding|other\\s+than|shall\\s+not\\s+apply\\s+to)[^.]{0,200}\\b"
            "(?:indemnif|confidential|gross\\s+negligence|willful|wilful)[^.]{0,300}\\bliab|"
            "\\bliab\\w*[^.]{0,300}\\b(?:shall\\s+not\\s+apply|except\\s+for)[^.]{0,200}\\b"
            "(?:indemnif|confidential|gross\\s+negligence|willful|wilful)");
        add("Cap On Liability",
            "\\b(?:aggregate|total|maximum|cumulative|entire)\\s+liability|\\bliab\\w*[^.]{0,200}"
            "\\b(?:shall\\s+not\\s+exceed|limited\\s+to|in\\s+excess\\s+of)|\\bin\\s+no\\s+"
            "event\\s+"
            "shall[^.]{0,100}\\bliable");
        add("Liquidated Damages",
            "\\bliquidated\\s+damages|\\btermination\\s+fee|\\bbreak-?up\\s+fee|\\bkill\\s+fee"
            "|\\bnot\\s+as\\s+a\\s+penalty"
            // A sum fixed in advance for leaving early or for a default, whatever it is called.
            "|\\b(?:cancellation|exit|early\\s+termination|buy-?out|break)\\s+(?:fee|charge"
            "|payment)"
            "|\\btermination\\s+(?:payment|charge)"
            "|\\bpay\\s+(?:to\\s+\\w+\\s+)?(?:a|the)\\s+(?:\\w+\\s+)?penalt(?:y|ies)"
            "|\\bpenalt(?:y|ies)\\s+(?:equal|of\\s+\\$|shall\\s+apply)|\\bpayment\\s+penalt");
        add("Warranty Duration",
            "\\bwarrant\\w*[^.]{0,200}\\b(?:period\\s+of|for\\s+(?:a\\s+period\\s+of\\s+)?)\\s*"
            "(?:\\w+\\s+)?\\(?\\d+\\)?\\s*(?:days|months|years)|\\bwarranty\\s+period");
        add("Insurance", "\\binsurance\\b|\\binsured\\b");
        add("Covenant Not To Sue",
            "\\bcovenants?\\s+not\\s+to\\s+sue|\\bnot\\s+to\\s+sue|\\b(?:shall|will)\\s+not\\s+"
            "(?:directly\\s+or\\s+indirectly\\s+)?(?:\\w+\\s+){0,3}(?:contest|challenge|dispute|"
            "oppose|attack)|\\bno\\s+(?:claim|action|suit)\\s+(?:shall|may)\\s+be\\s+brought");
        // A clause that names someone a beneficiary, or one that excludes third-party rights
        // except for some: the bare "no third-party beneficiaries" clause is what most contracts
        // say, and it gives no one a right.
        add("Third Party Beneficiary",
            "\\b(?:is|are|be|been|as|become|becomes|deemed|constitutes?)\\s+(?:an?\\s+)?(?:"
            "(?:intended|express|expressly|specific|direct|third[- ]part(?:y|ies)"
            "|creditor)\\s+){1,4}beneficiar(?:y|ies)"
            "|\\bthird[- ]part(?:y|ies)\\s+beneficiar\\w*[^.]{0,200}\\b(?:except\\s+(?:as|for"
            "|that|to|with)|save\\s+(?:as|for)|unless\\s+otherwise|provided\\s+(?:however|that))"
            "|\\b(?:except|other\\s+than|save)\\b[^.]{0,200}\\b(?:no\\s+(?:person|third|other"
            "|entity)|nothing)[^.]{0,250}\\b(?:confer|beneficiar|benefit)"
            "|\\bconfer\\w*[^.]{0,60}\\b(?:upon|on|to)\\s+(?:any|a)\\s+(?:person|party|third"
            "|entity|other)[^.]{0,200}\\bexcept\\s+(?:as|for|that|to|with)");
        return t;
    }();
    return table;
}

} // namespace

bool hasPresenceCue(const QString& category)
{
    // The document-level categories the classifier learns (the dates) have their rule's date.
    return cues().contains(category)
        || (documentLevelCategories().contains(category)
            && !ruleDecidedCategories().contains(category));
}

namespace {

// The candidate holding `at`, or -1 (candidates are in text order).
int candidateAt(const QList<ClauseCandidate>& candidates, qsizetype at)
{
    auto after = std::upper_bound(candidates.begin(), candidates.end(), at,
        [](qsizetype pos, const ClauseCandidate& c) { return pos < c.start; });
    if (after == candidates.begin())
        return -1;
    const int index = int(std::distance(candidates.begin(), after)) - 1;
    return at < candidates[index].end ? index : -1;
}

} // namespace

std::vector<int> cueCandidates(
    const QString& category, const QString& text, const QList<ClauseCandidate>& candidates)
{
    std::vector<int> out;
    if (candidates.isEmpty())
        return out;
    // A date category's cue is its document-level rule's date: no wording of its own.
    if (const auto date = ruleDateStart(category, text)) {
        if (const int index = candidateAt(candidates, *date); index >= 0)
            out.push_back(index);
        return out;
    }
    const auto cue = cues().constFind(category);
    if (cue == cues().constEnd())
        return out;
    auto it = cue->globalMatch(text);
    while (it.hasNext()) {
        // The candidate holding the start of the match.
        const int index = candidateAt(candidates, it.next().capturedStart());
        if (index >= 0 && (out.empty() || out.back() != index))
            out.push_back(index);
    }
    return out;
}

} // namespace cw::heads
