#pragma once

#include <QString>
#include <QStringList>

namespace cw::heads {

// The categories that `category` qualifies, as CUAD's category descriptions define them
// (a Competitive Restriction Exception is "an exception or carve-out to Non-Compete,
// Exclusivity and No-Solicit of Customers"); empty for a category that stands alone. Tried and
// left out (5-fold on 298): License Grant for the five licence categories (Affiliate
// License-Licensee 0.76 -> 0.71, seed 19: half the contracts grant a licence), Cap On
// Liability for Uncapped Liability (0.80 -> 0.78 seed 17, 0.77 both seed 19).
const QStringList& qualifiedCategories(const QString& category);

} // namespace cw::heads
