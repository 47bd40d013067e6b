// The field extractors (dates, durations, amounts, defined terms, cross-references,
// governing law) as a Qt plugin: the same head class the app carries built in.
#include "app/heads/builtin_heads.h"
#include "app/plugins/clause_head.h"

#include <QObject>

namespace cw::heads {

class FieldExtractorsPlugin : public QObject, public ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "field_extractors.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    std::unique_ptr<ClauseHead> createHead() const override
    {
        return std::make_unique<FieldExtractorHead>();
    }
};

} // namespace cw::heads

#include "field_extractors_plugin.moc"
