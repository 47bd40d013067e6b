#include "app/heads/jurisdiction_names.h"

#include <QSet>
#include <algorithm>

namespace cw::heads {

namespace {

const QStringList& usStates()
{
    static const QStringList states = { "Alabama", "Alaska", "Arizona", "Arkansas", "California",
        "Colorado", "Connecticut", "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois",
        "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts",
        "Michigan", "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada",
        "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota",
        "Ohio", "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina",
        "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington",
        "West Virginia", "Wisconsin", "Wyoming", "District of Columbia" };
    return states;
}

// Sovereign countries by their usual English short names, and territories with laws of their
// own that contracts choose. Georgia the country is left out: the US state is meant far more
// often in contracts, and the two cannot be told apart by name.
const QStringList& countries()
{
    static const QStringList list = { "Afghanistan", "Albania", "Algeria", "Andorra", "Angola",
        "Antigua and Barbuda", "Argentina", "Armenia", "Australia", "Austria", "Azerbaijan",
        "Bahamas", "Bahrain", "Bangladesh", "Barbados", "Belarus", "Belgium", "Belize", "Benin",
        "Bhutan", "Bolivia", "Bosnia and Herzegovina", "Botswana", "Brazil", "Brunei", "Bulgaria",
        "Burkina Faso", "Burundi", "Cabo Verde", "Cambodia", "Cameroon", "Canada",
        "Central African Republic", "Chad", "Chile", "China", "Colombia", "Comoros", "Costa Rica",
        "Croatia", "Cuba", "Cyprus", "Czech Republic", "Denmark", "Djibouti", "Dominica",
        "Dominican Republic", "Ecuador", "Egypt", "El Salvador", "Equatorial Guinea", "Eritrea",
        "Estonia", "Eswatini", "Ethiopia", "Fiji", "Finland", "France", "Gabon", "Gambia",
        "Germany", "Ghana", "Greece", "Grenada", "Guatemala", "Guinea", "Guinea-Bissau", "Guyana",
        "Haiti", "Honduras", "Hungary", "Iceland", "India", "Indonesia", "Iran", "Iraq", "Ireland",
        "Israel", "Italy", "Jamaica", "Japan", "Jordan", "Kazakhstan", "Kenya", "Kiribati",
        "Kuwait", "Kyrgyzstan", "Laos", "Latvia", "Lebanon", "Lesotho", "Liberia", "Libya",
        "Liechtenstein", "Lithuania", "Luxembourg", "Madagascar", "Malawi", "Malaysia", "Maldives",
        "Mali", "Malta", "Marshall Islands", "Mauritania", "Mauritius", "Mexico", "Micronesia",
        "Moldova", "Monaco", "Mongolia", "Montenegro", "Morocco", "Mozambique", "Myanmar",
        "Namibia", "Nauru", "Nepal", "Netherlands", "New Zealand", "Nicaragua", "Niger", "Nigeria",
        "North Korea", "North Macedonia", "Norway", "Oman", "Pakistan", "Palau", "Panama",
        "Papua New Guinea", "Paraguay", "Peru", "Philippines", "Poland", "Portugal", "Qatar",
        "Romania", "Russia", "Rwanda", "Saint Kitts and Nevis", "Saint Lucia",
        "Saint Vincent and the Grenadines", "Samoa", "San Marino", "Sao Tome and Principe",
        "Saudi Arabia", "Senegal", "Serbia", "Seychelles", "Sierra Leone", "Singapore", "Slovakia",
        "Slovenia", "Solomon Islands", "Somalia", "South Africa", "South Korea", "South Sudan",
        "Spain", "Sri Lanka", "Sudan", "Suriname", "Sweden", "Switzerland", "Syria", "Taiwan",
        "Tajikistan", "Tanzania", "Thailand", "Timor-Leste", "Togo", "Tonga", "Trinidad and Tobago",
        "Tunisia", "Turkey", "Turkmenistan", "Tuvalu", "Uganda", "Ukraine", "United Arab Emirates",
        "United Kingdom", "United States", "Uruguay", "Uzbekistan", "Vanuatu", "Venezuela",
        "Vietnam", "Yemen", "Zambia", "Zimbabwe",
        // Territories and the parts of the United Kingdom.
        "England and Wales", "England", "Wales", "Scotland", "Northern Ireland", "Hong Kong",
        "Macau", "Puerto Rico", "Cayman Islands", "Bermuda", "British Virgin Islands", "Jersey",
        "Guernsey", "Isle of Man", "Gibraltar", "Curacao" };
    return list;
}

// Other ways of writing a name above.
const QList<QPair<QString, QString>>& otherNames()
{
    static const QList<QPair<QString, QString>> list = { { "England & Wales", "England and Wales" },
        { "U.K.", "United Kingdom" }, { "Great Britain", "United Kingdom" },
        { "People's Republic of China", "China" }, { "People\u2019s Republic of China", "China" },
        { "PRC", "China" }, { "P.R.C.", "China" }, { "Beijing", "China" }, { "Shanghai", "China" },
        { "Republic of China", "Taiwan" }, { "R.O.C.", "Taiwan" }, { "Korea", "South Korea" },
        { "Republic of Korea", "South Korea" }, { "Federal Republic of Germany", "Germany" },
        { "Holland", "Netherlands" }, { "Czechia", "Czech Republic" }, { "Viet Nam", "Vietnam" },
        { "Russian Federation", "Russia" }, { "Macao", "Macau" }, { "Cape Verde", "Cabo Verde" },
        { "Ivory Coast", "Ivory Coast" }, { "Cote d'Ivoire", "Ivory Coast" },
        { "C\u00f4te d'Ivoire", "Ivory Coast" }, { "Swaziland", "Eswatini" },
        { "Macedonia", "North Macedonia" }, { "Burma", "Myanmar" }, { "Cura\u00e7ao", "Curacao" },
        { "Democratic Republic of the Congo", "Democratic Republic of the Congo" },
        { "Congo", "Congo" }, { "UAE", "United Arab Emirates" },
        { "U.A.E.", "United Arab Emirates" }, { "United States of America", "United States" },
        { "U.S.A.", "United States" }, { "U.S.", "United States" },
        { "Massachussets", "Massachusetts" } };
    return list;
}

} // namespace

const QList<QPair<QString, QString>>& jurisdictionAliases()
{
    static const QList<QPair<QString, QString>> list = [] {
        QList<QPair<QString, QString>> l;
        for (const QString& s : usStates())
            l.append({ s, s });
        for (const char* p : { "Ontario", "Quebec", "British Columbia", "Alberta", "Manitoba",
                 "Saskatchewan", "Nova Scotia", "New Brunswick", "Prince Edward Island",
                 "Newfoundland and Labrador", "Newfoundland" })
            l.append({ QString::fromUtf8(p), QString::fromUtf8(p) + ", Canada" });
        for (const char* s : { "New South Wales", "Victoria", "Queensland", "Western Australia",
                 "South Australia", "Tasmania" })
            l.append({ QString::fromUtf8(s), QString::fromUtf8(s) + ", Australia" });
        for (const QString& c : countries())
            l.append({ c, c });
        l.append(otherNames());
        std::stable_sort(l.begin(), l.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
        return l;
    }();
    return list;
}

namespace {

QString aliasAtStart(const QString& s)
{
    for (const auto& [alias, canonical] : jurisdictionAliases()) {
        if (s.startsWith(alias, Qt::CaseInsensitive)) {
            const qsizetype n = alias.size();
            if (s.size() == n || !s.at(n).isLetter())
                return canonical;
        }
    }
    return {};
}

} // namespace

QString normaliseJurisdiction(const QString& name)
{
    // "the State of New York", "Province of Ontario", "the Republic of Kazakhstan": the words
    // that say what kind of jurisdiction it is come off one at a time until a name is known
    // (aliases are tried first, so "Republic of China" stays Taiwan).
    static const QStringList designators
        = { "the ", "State of ", "Commonwealth of ", "Province of ", "Federal Republic of ",
              "Republic of ", "Kingdom of ", "Territory of ", "Government of " };
    QString s = name.simplified();
    for (int round = 0; round < 4 && !s.isEmpty(); ++round) {
        if (const QString known = aliasAtStart(s); !known.isEmpty())
            return known;
        bool stripped = false;
        for (const QString& d : designators) {
            if (s.startsWith(d, Qt::CaseInsensitive)) {
                s = s.mid(d.size()).trimmed();
                stripped = true;
                break;
            }
        }
        if (!stripped)
            break;
    }
    return {};
}

bool isUsState(const QString& canonical)
{
    static const QSet<QString> set(usStates().begin(), usStates().end());
    return set.contains(canonical);
}

QStringList splitLaws(const QString& laws)
{
    QStringList out;
    for (const QString& part : laws.split(';')) {
        if (!part.trimmed().isEmpty())
            out.append(part.trimmed());
    }
    return out;
}

bool jurisdictionMatches(const QString& answer, const QString& laws)
{
    // The answer's jurisdictions: each ';' item whole, and each of its ',' parts ("Virginia,
    // Texas" is two states; "Ontario, Canada" a province and its country).
    QSet<QString> gold;
    for (const QString& item : answer.split(';')) {
        for (const QString& piece : QStringList { item } + item.split(',')) {
            const QString n = normaliseJurisdiction(piece.trimmed());
            if (!n.isEmpty())
                gold.insert(n.section(',', 0, 0));
        }
    }
    const QStringList ours = splitLaws(laws);
    if (ours.isEmpty())
        return false;
    for (const QString& law : ours) {
        const QString want = law.section(',', 0, 0).trimmed();
        const bool britain
            = (want == "England and Wales" && (gold.contains("England") || gold.contains("Wales")))
            || ((want == "England" || want == "Wales") && gold.contains("England and Wales"));
        if (!gold.contains(want) && !britain)
            return false;
    }
    return true;
}

} // namespace cw::heads
