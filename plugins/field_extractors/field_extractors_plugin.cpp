// The field extractors (dates, durations, amounts, defined terms, cross-references,
// governing law) as a Qt plugin; field_extractors.json says who it is.
#include "app/plugins/clause_head.h"
#include "plugins/field_extractors/field_extractor_head.h"

#include <QObject>

namespace cw::heads {

class FieldExtractorsPlugin : public QObject, public ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "field_extractors.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    Result<std::unique_ptr<ClauseHead>> createHead(const HeadSetup&) const override
    {
        return std::unique_ptr<ClauseHead>(std::make_unique<FieldExtractorHead>());
    }
};

} // namespace cw::heads

#include "field_extractors_plugin.moc"
