#pragma once

#include <QString>
#include <QStringList>

namespace cw::heads {

// The categories that `category` qualifies, as CUAD's category descriptions define them
// (a Competitive Restriction Exception is "an exception or carve-out to Non-Compete,
// Exclusivity and No-Solicit of Customers"); empty for a category that stands alone. Tried and
// left out (5-fold on 298): License Grant for the five licence categories (Affiliate
// License-Licensee 0.76 -> 0.71, seed 19: half the contracts grant a licence), Cap On
// Liability for Uncapped Liability (0.80 -> 0.78 seed 17, 0.77 both seed 19). Nor (seeds
// 17/18) CRE's evidence beside a covenant, its best logit summed with, gated by or the lesser
// of the qualified categories' best logit within 2 or 5 candidates or the same section (CRE
// 0.52/0.46 -> 0.42-0.52/0.44-0.48); nor the reverse reading, Non-Compete, Exclusivity and
// No-Solicit Of Customers reading CRE's best logit and Renewal Term Notice Period's (the four
// F1s' sum -0.010/+0.061/-0.002/-0.016 over seeds 17-20).
const QStringList& qualifiedCategories(const QString& category);

} // namespace cw::heads
