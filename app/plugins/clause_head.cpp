#include "app/plugins/clause_head.h"

namespace cw {

QString headKindName(HeadKind kind)
{
    return kind == HeadKind::Llm ? QStringLiteral("llm") : QStringLiteral("fast");
}

} // namespace cw
