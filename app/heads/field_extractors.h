#pragma once

#include "app/heads/governing_law.h"
#include "app/heads/located.h"

#include <QDate>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace cw::heads {

// Dates written "June 21, 1999", "21 June 1999", "22 Dec. 2017", "the 20th day of March,
// 2018", "6/21/1999", "2019-10-01", within [from, to) of text.
QList<Located<QDate>> findDates(const QString& text, qsizetype from = 0, qsizetype to = -1);
// CUAD's normalised date answers ("6/21/99", "10/1/2019"); nothing for partial dates.
std::optional<QDate> parseShortDate(const QString& answer);

// The contract's title: the first line of the opening that names an agreement.
std::optional<Located<QString>> findDocumentName(const QString& text);

// Parties in the opening paragraph ("ABC Corp., a Delaware corporation (\"ABC\")"): each
// party's name and, when given, its defined name.
struct Party {
    Located<QString> name;
    std::optional<Located<QString>> definedName;
};
QList<Party> findParties(const QString& text);

// The agreement date (the opening's "dated as of ..." or first date) and the effective
// date ("effective as of ...", the "Effective Date" definition); the agreement date when
// no separate effective date is given.
std::optional<Located<QDate>> findAgreementDate(const QString& text);
std::optional<Located<QDate>> findEffectiveDate(const QString& text);
// The effective date only where the contract states one ("effective as of ...", the
// "Effective Date" definition); none where findEffectiveDate falls back to the agreement date.
std::optional<Located<QDate>> findStatedEffectiveDate(const QString& text);

// Periods written "thirty (30) days", "60 days", "two (2) years", "12 months" -> days.
struct Duration {
    int count = 0;
    QString unit; // "day", "month", "year"
    int days() const;
};
QList<Located<Duration>> findDurations(const QString& text, qsizetype from = 0, qsizetype to = -1);

// Amounts with currency ("$1,000,000", "USD 5 million", "EUR 10,000").
struct Amount {
    double value = 0.0;
    QString currency; // ISO code: USD, EUR, GBP, ...
};
QList<Located<Amount>> findAmounts(const QString& text, qsizetype from = 0, qsizetype to = -1);

// Terms defined in quotes ("Effective Date" means / (the "Agreement")).
QList<Located<QString>> findDefinedTerms(
    const QString& text, qsizetype from = 0, qsizetype to = -1);

// References to other parts: "Section 5.2", "Article IV", "Exhibit A", "Schedule 3".
QList<Located<QString>> findCrossReferences(
    const QString& text, qsizetype from = 0, qsizetype to = -1);

// The fields a finding of `category` carries, read from its text: {"law": "Delaware"},
// {"notice_days": 60}, {"renewal_term": "1 year"}, {"cap_amount": ..}, {"durations": [..]},
// plus "amounts", "defined_terms", "cross_references" when present.
QJsonObject fieldsForFinding(const QString& category, const QString& findingText);

} // namespace cw::heads
