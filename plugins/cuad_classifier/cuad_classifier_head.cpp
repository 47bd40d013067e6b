#include "plugins/cuad_classifier/cuad_classifier_head.h"

#include "app/heads/cuad_classifier.h"
#include "app/heads/heads_evaluation.h"

namespace cw::heads {

Result<std::unique_ptr<ClauseHead>> CuadClassifierHead::load(const QString& modelPath)
{
    if (modelPath.isEmpty())
        return makeError("cuad_classifier: its metadata names no model file ('data'); reinstall "
                         "the plugin");
    auto model = ClauseModel::load(modelPath);
    if (!model)
        return model.error();
    return std::unique_ptr<ClauseHead>(std::make_unique<CuadClassifierHead>(std::move(*model)));
}

Result<QList<Finding>> CuadClassifierHead::find(
    const Document& document, const QList<Clause>& clauses, const HeadRunContext& context) const
{
    const QString& text = document.text;
    const QList<ClauseCandidate> candidates = buildCandidates(text, clauses);
    std::vector<std::vector<float>> scores(size_t(candidates.size()));
    for (int i = 0; i < candidates.size(); ++i) {
        if (i % 128 == 0) {
            if (context.cancelled && context.cancelled())
                return makeError("cancelled");
            if (context.progress)
                context.progress(i, int(candidates.size()));
        }
        m_model.score(
            candidateFeatures(text, candidates, i, m_model.hashBits()), scores[size_t(i)]);
    }
    applyCategoryGates(m_model, text, candidates, scores);
    QList<Finding> findings = fastFindings(m_model, text, candidates, scores);
    for (Finding& f : findings)
        f.page = document.pageAt(f.start);
    return findings;
}

} // namespace cw::heads
