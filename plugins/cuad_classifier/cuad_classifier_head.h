#pragma once

#include "app/heads/clause_model.h"
#include "app/plugins/clause_head.h"

namespace cw::heads {

// The fast clause classifier for the CUAD categories, with the document-level rules (title,
// parties, dates) and field extraction: the model file the plugin's metadata names as its
// "data" (cuad_classifier.cwm) scores every candidate sentence.
class CuadClassifierHead final : public ClauseHead {
public:
    explicit CuadClassifierHead(ClauseModel model)
        : m_model(std::move(model))
    {
    }
    // The head with the model file at `modelPath`; errors name the file.
    static Result<std::unique_ptr<ClauseHead>> load(const QString& modelPath);

    Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const override;

private:
    ClauseModel m_model;
};

} // namespace cw::heads
