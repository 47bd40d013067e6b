#pragma once

#include "app/heads/clause_model.h"
#include "app/plugins/clause_head.h"

#include <memory>
#include <vector>

namespace cw::heads {

// The fast clause classifier for the 41 CUAD categories, with the document-level rules
// (title, parties, dates) and field extraction. Its data file is cuad_classifier.cwm.
class CuadClassifierHead final : public ClauseHead {
public:
    static constexpr const char* kModelFile = "cuad_classifier.cwm";
    HeadMetadata metadata() const override;
    Result<void> load(const QString& dataDir) override;
    Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const override;
    // For tests and the evaluation: use a model already in memory.
    void setModel(ClauseModel model)
    {
        m_model = std::move(model);
        m_loaded = true;
    }

private:
    ClauseModel m_model;
    bool m_loaded = false;
};

// Field extractors over every clause: dates, durations, amounts, defined terms and
// cross-references, reported as findings of no CUAD category (category "Fields") whose
// fields the GUI shows beside the clause. Needs no data file.
class FieldExtractorHead final : public ClauseHead {
public:
    HeadMetadata metadata() const override;
    Result<void> load(const QString& dataDir) override;
    Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const override;
};

// One of each built-in head, not yet loaded.
std::vector<std::unique_ptr<ClauseHead>> makeBuiltInHeads();

} // namespace cw::heads
