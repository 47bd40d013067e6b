// The language model head as a Qt plugin. llm_review.json says who it is; its questions (the
// categories, their meanings, keywords and answer fields the schema is built from) are the
// data file llm_questions.json beside it.
#include "app/plugins/clause_head.h"
#include "plugins/llm_review/llm_review_head.h"

#include <QObject>

namespace cw::llm {

class LlmReviewPlugin : public QObject, public ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "llm_review.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    Result<std::unique_ptr<ClauseHead>> createHead(const HeadSetup& setup) const override
    {
        return LlmReviewHead::load(setup);
    }
};

} // namespace cw::llm

#include "llm_review_plugin.moc"
