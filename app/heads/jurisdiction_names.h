#pragma once

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace cw::heads {

// The names contracts use for jurisdictions whose law they choose, each with its canonical
// name: the US states, the Canadian provinces, the Australian states, every sovereign
// country and a few territories, plus common abbreviations ("PRC", "U.K.", "R.O.C.").
// Longest alias first, so "New York" wins over "York" and "West Virginia" over "Virginia".
const QList<QPair<QString, QString>>& jurisdictionAliases();

// The canonical name of a jurisdiction written any usual way ("State of New York", "PRC",
// "Province of Ontario", "the Republic of Kazakhstan"); empty if unknown.
QString normaliseJurisdiction(const QString& name);

// True when the canonical name is a US state (or the District of Columbia).
bool isUsState(const QString& canonical);

// Several governing laws in one field: "Massachusetts; Netherlands".
QStringList splitLaws(const QString& laws);

// True when a CUAD governing-law answer ("Massachusetts; Netherlands", "Virginia, Texas",
// "Province of Ontario, Canada") names every jurisdiction of `laws` (one, or several joined
// by "; ").
bool jurisdictionMatches(const QString& answer, const QString& laws);

} // namespace cw::heads
