#include "app/heads/text_features.h"

#include <QRegularExpression>
#include <algorithm>
#include <cmath>

namespace cw::heads {

namespace {

constexpr uint32_t kNumberToken = 0x6e756d62u;

uint32_t mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

// Word hashes of [start, end): letters lower-cased, digits folded into one number token.
// With `stems`, words longer than kStemLength letters also give the hash of their first
// kStemLength letters, so "terminate", "terminated" and "termination" share a feature.
constexpr int kStemLength = 6;

void wordHashes(const QString& text, qsizetype start, qsizetype end, std::vector<uint32_t>& out,
    std::vector<uint32_t>* stems = nullptr)
{
    uint32_t h = 2166136261u;
    uint32_t stem = 0;
    int length = 0;
    bool number = false;
    auto flush = [&] {
        if (length > 0)
            out.push_back(number ? kNumberToken : h);
        if (stems && !number && length > kStemLength)
            stems->push_back(stem);
        h = 2166136261u;
        length = 0;
        number = false;
    };
    for (qsizetype i = start; i < end; ++i) {
        const QChar c = text.at(i);
        if (c.isLetter()) {
            if (number)
                flush();
            h = (h ^ c.toLower().unicode()) * 16777619u;
            if (++length == kStemLength)
                stem = h;
        } else if (c.isDigit()) {
            if (length > 0 && !number)
                flush();
            number = true;
            length = 1;
        } else if ((c == ',' || c == '.') && number && i + 1 < end && text.at(i + 1).isDigit()) {
            continue; // 1,000.00 is one number
        } else if (c == '\'' || c == QChar(0x2019)) {
            continue; // party's -> partys
        } else {
            flush();
            if (c == '$' || c == '%' || c == QChar(0x20AC) || c == QChar(0xA3))
                out.push_back(mix(c.unicode() + 77u));
        }
    }
    flush();
}

// Hashes of the character n-grams of each word of [start, end) (letters lower-cased, the word
// marked at both ends as in "<term", "ted>"), so spellings a stem misses ("licence",
// "license", "sub-license") and words run together by OCR still share features.
constexpr int kCharGram = 4;

void charGramHashes(const QString& text, qsizetype start, qsizetype end, std::vector<uint32_t>& out)
{
    char16_t word[64];
    int length = 0;
    auto flush = [&] {
        if (length >= kCharGram - 1 && length + 2 <= int(std::size(word))) {
            for (int i = length; i > 0; --i)
                word[i] = word[i - 1];
            word[0] = u'<';
            word[length + 1] = u'>';
            const int n = length + 2;
            for (int i = 0; i + kCharGram <= n; ++i) {
                uint32_t h = 2166136261u;
                for (int j = 0; j < kCharGram; ++j)
                    h = (h ^ word[i + j]) * 16777619u;
                out.push_back(h);
            }
        }
        length = 0;
    };
    for (qsizetype i = start; i < end; ++i) {
        const QChar c = text.at(i);
        if (c.isLetter()) {
            if (length + 2 < int(std::size(word)))
                word[length] = c.toLower().unicode();
            ++length;
        } else {
            flush();
        }
    }
    flush();
}

enum Prefix : uint32_t {
    kUni = 1,
    kBi = 2,
    kHead = 3,
    kPrev = 4,
    kNext = 5,
    kMeta = 6,
    kHeadBi = 7,
    kStem = 8,
    kChar = 9
};

uint32_t featureHash(uint32_t prefix, uint32_t a, uint32_t b = 0)
{
    return mix(a * 0x9E3779B1u + mix(b + prefix * 0x85EBCA77u) + prefix);
}

struct Pattern {
    const char* name;
    QRegularExpression regex;
};

const std::vector<Pattern>& patterns()
{
    static const std::vector<Pattern> list = [] {
        const auto ci = QRegularExpression::CaseInsensitiveOption;
        std::vector<Pattern> p;
        auto add = [&](const char* name, const char* re) {
            p.push_back({ name, QRegularExpression(QString::fromUtf8(re), ci) });
        };
        add("days", "\\b\\d+\\)?\\s*(?:business\\s+|calendar\\s+)?days?\\b");
        add("months", "\\b\\d+\\)?\\s*months?\\b");
        add("years", "\\b(?:\\d+|one|two|three|five|ten)\\)?\\s*years?\\b");
        add("money", "(?:\\$|usd|eur|€|£)\\s*\\d|\\d\\s*(?:dollars|euros)");
        add("percent", "\\d\\s*(?:%|percent)");
        add("defined", "[\"\u201C][A-Z][^\"\u201D]{1,40}[\"\u201D]");
        add("caps", "\\b[A-Z]{4,}\\s+[A-Z]{4,}\\s+[A-Z]{4,}\\b");
        add("lawsof", "laws\\s+of\\s+(?:the\\s+)?(?:state|commonwealth|province|republic)?");
        add("notwithstanding", "^\\s*notwithstanding");
        add("shallnot", "shall\\s+not|will\\s+not|may\\s+not");
        add("withoutconsent", "without\\s+(?:the\\s+)?(?:prior\\s+)?(?:written\\s+)?consent");
        add("terminateNotice",
            "terminat\\w*[^.]{0,80}\\b(?:notice|for\\s+any\\s+reason|without\\s+cause|"
            "convenience)");
        add("renew", "renew\\w*[^.]{0,120}\\b(?:unless|notice)");
        add("firstRight", "right\\s+of\\s+first|first\\s+(?:refusal|offer|negotiation)");
        add("liabilityCap",
            "(?:liability|liable)[^.]{0,200}\\b(?:exceed|limited\\s+to|in\\s+excess)");
        add("noLiability", "in\\s+no\\s+event|shall\\s+not\\s+be\\s+liable");
        add("exclusion", "(?:shall\\s+not\\s+apply|except\\s+for|excluding|other\\s+than)");
        add("employees", "employ\\w*|personnel|hire");
        add("solicit", "solicit|induce|entice");
        add("compete", "compet\\w*");
        add("license", "licen[cs]\\w*");
        add("perpetualIrrevocable", "perpetual|irrevocable");
        add("affiliates", "affiliates?|subsidiar");
        add("sublicens", "sub-?licens");
        add("royalty", "royalt|revenue|profit|net\\s+sales|commission");
        add("minimum", "minimum|at\\s+least");
        add("audit", "audit|inspect|books\\s+and\\s+records");
        add("insurance", "insur|insured|coverage");
        add("warranty", "warrant");
        add("assign", "assign|transfer");
        add("controlChange",
            "change\\s+(?:of|in)\\s+control|merger|consolidat|substantially\\s+all|acquisition");
        add("beneficiary", "beneficiar|third\\s+part");
        add("owner", "own\\w*|title|vest");
        add("ipwords", "intellectual\\s+property|patent|copyright|invention|improvement");
        add("escrow", "escrow|source\\s+code");
        add("disparage", "disparag|derogatory|negative\\s+statement");
        add("contest", "contest|challenge|dispute\\s+the\\s+validity|not\\s+sue");
        add("price", "pric\\w*|fee|rate");
        add("increase", "increas|decreas|adjust|raise|exceed");
        add("mfn", "favou?r\\w*|no\\s+less|more\\s+favorable|better\\s+terms|lower\\s+price");
        add("exclusive", "exclusiv\\w*|sole\\b|only\\b");
        add("territory", "territor|geograph|worldwide");
        add("postTerm",
            "(?:after|following|upon)\\s+(?:the\\s+)?(?:expiration|termination)|surviv");
        add("liquidated", "liquidated|termination\\s+fee|penalty|break-?up\\s+fee");
        add("joint", "jointly|joint\\s+owner|co-?own");
        return p;
    }();
    return list;
}

} // namespace

FeatureVector candidateFeatures(
    const QString& text, const QList<ClauseCandidate>& candidates, int index, uint32_t hashBits)
{
    const ClauseCandidate& c = candidates[index];
    const uint32_t mask = (1u << hashBits) - 1u;
    std::vector<uint32_t> words, stems;
    std::vector<uint32_t> out;
    wordHashes(text, c.start, c.end, words, &stems);
    out.reserve(words.size() * 3 + 64);
    for (size_t i = 0; i < words.size(); ++i) {
        out.push_back(featureHash(kUni, words[i]) & mask);
        out.push_back(featureHash(kBi, words[i], i + 1 < words.size() ? words[i + 1] : 1u) & mask);
    }
    for (uint32_t s : stems)
        out.push_back(featureHash(kStem, s) & mask);
    std::vector<uint32_t> grams;
    charGramHashes(text, c.start, c.end, grams);
    for (uint32_t g : grams)
        out.push_back(featureHash(kChar, g) & mask);
    std::vector<uint32_t> heading;
    wordHashes(c.heading, 0, c.heading.size(), heading);
    for (size_t i = 0; i < heading.size(); ++i) {
        out.push_back(featureHash(kHead, heading[i]) & mask);
        if (i + 1 < heading.size())
            out.push_back(featureHash(kHeadBi, heading[i], heading[i + 1]) & mask);
    }
    if (heading.empty())
        out.push_back(featureHash(kMeta, 11) & mask);
    if (index > 0) {
        std::vector<uint32_t> prev;
        const ClauseCandidate& p = candidates[index - 1];
        wordHashes(text, p.start, p.end, prev);
        for (uint32_t w : prev)
            out.push_back(featureHash(kPrev, w) & mask);
    }
    // The next sentence often finishes what this one starts ("... subject to the following:").
    if (index + 1 < candidates.size()) {
        std::vector<uint32_t> next;
        const ClauseCandidate& n = candidates[index + 1];
        wordHashes(text, n.start, n.end, next);
        for (uint32_t w : next)
            out.push_back(featureHash(kNext, w) & mask);
    }
    const double relative = text.isEmpty() ? 0.0 : double(c.start) / double(text.size());
    out.push_back(featureHash(kMeta, 100 + uint32_t(relative * 20.0)) & mask);
    if (c.start < 3000)
        out.push_back(featureHash(kMeta, 200) & mask);
    const qsizetype length = c.end - c.start;
    out.push_back(
        featureHash(kMeta, 300 + uint32_t(std::log2(double(std::max<qsizetype>(length, 1)))))
        & mask);
    if (c.isHeading)
        out.push_back(featureHash(kMeta, 400) & mask);
    const QString span = text.mid(c.start, c.end - c.start);
    uint32_t k = 0;
    for (const Pattern& p : patterns()) {
        if (p.regex.match(span).hasMatch())
            out.push_back(featureHash(kMeta, 1000 + k) & mask);
        ++k;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    FeatureVector v;
    v.indices = std::move(out);
    v.value = v.indices.empty() ? 0.0f : float(1.0 / std::sqrt(double(v.indices.size())));
    return v;
}

} // namespace cw::heads
