// A head whose SDK types are of another version than the host's (as if built against a newer
// review_types.h with the same virtual functions): the host must refuse it.
#include "app/plugins/clause_head.h"

#include <QObject>

namespace {

class OtherTypesHeadPlugin : public QObject, public cw::ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "other_types_head.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    int typesVersion() const override { return cw::kHeadTypesVersion + 1; }
    cw::Result<std::unique_ptr<cw::ClauseHead>> createHead(const cw::HeadSetup&) const override
    {
        qFatal("the host made a head of another types version");
    }
};

} // namespace

#include "other_types_head_plugin.moc"
