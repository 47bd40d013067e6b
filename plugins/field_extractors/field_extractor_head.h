#pragma once

#include "app/plugins/clause_head.h"

namespace cw::heads {

// Field extractors over every clause: dates, durations, amounts, defined terms and
// cross-references, reported as findings of no CUAD category (category "Fields") whose
// fields the review joins to the CUAD findings of the same clause. Needs no data file.
class FieldExtractorHead final : public ClauseHead {
public:
    static constexpr const char* kCategory = "Fields";
    Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const override;
};

} // namespace cw::heads
