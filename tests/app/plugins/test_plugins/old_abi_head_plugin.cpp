// A head built for the previous plugin ABI: its IID says /1. The host must refuse it from the
// metadata alone, before any of its code runs.
#include "app/plugins/clause_head.h"

#include <QObject>

namespace {

class OldAbiHeadPlugin : public QObject, public cw::ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID "org.clausewright.ClauseHeadFactory/1" FILE "old_abi_head.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    cw::Result<std::unique_ptr<cw::ClauseHead>> createHead(const cw::HeadSetup&) const override
    {
        qFatal("the host ran a plugin of another ABI");
    }
};

} // namespace

#include "old_abi_head_plugin.moc"
