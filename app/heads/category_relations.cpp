#include "app/heads/category_relations.h"

#include <QHash>

namespace cw::heads {

const QStringList& qualifiedCategories(const QString& category)
{
    static const QHash<QString, QStringList> table = {
        { QStringLiteral("Competitive Restriction Exception"),
            { QStringLiteral("Non-Compete"), QStringLiteral("Exclusivity"),
                QStringLiteral("No-Solicit Of Customers") } },
        // The notice that stops a renewal the contract provides for.
        { QStringLiteral("Notice Period To Terminate Renewal"),
            { QStringLiteral("Renewal Term") } },
    };
    static const QStringList none;
    const auto it = table.constFind(category);
    return it == table.constEnd() ? none : *it;
}

} // namespace cw::heads
