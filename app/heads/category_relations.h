#pragma once

#include <QString>
#include <QStringList>

namespace cw::heads {

// The categories that `category` qualifies, as CUAD's category descriptions define them
// (a Competitive Restriction Exception is "an exception or carve-out to Non-Compete,
// Exclusivity and No-Solicit of Customers"); empty for a category that stands alone.
const QStringList& qualifiedCategories(const QString& category);

} // namespace cw::heads
