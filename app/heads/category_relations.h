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
// F1s' sum -0.010/+0.061/-0.002/-0.016 over seeds 17-20). Nor (issue 34, seeds 17-20 against
// 0.783/0.786/0.789/0.786) siblings, the same covenant or grant with another object or party
// (No-Solicit Of Customers / Of Employees, Affiliate License-Licensor / -Licensee), the
// sibling's score at the category's best candidate as one more presence feature, since held-out
// false positives of No-Solicit Of Customers were employee covenants scoring 0.25-0.57 for it:
// 0.785/0.786/0.790/0.786, mean +0.001, within the seeds' scatter (No-Solicit Of Customers
// 0.53/0.47/0.54/0.51, Affiliate License-Licensor 0.60/0.60/0.65/0.53).
const QStringList& qualifiedCategories(const QString& category);

} // namespace cw::heads
