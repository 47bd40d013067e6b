// The CUAD clause classifier as a Qt plugin: the same head class the app carries built in,
// loaded with its model file (cuad_classifier.cwm) from the plugin's folder.
#include "app/heads/builtin_heads.h"
#include "app/plugins/clause_head.h"

#include <QObject>

namespace cw::heads {

class CuadClassifierPlugin : public QObject, public ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "cuad_classifier.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    std::unique_ptr<ClauseHead> createHead() const override
    {
        return std::make_unique<CuadClassifierHead>();
    }
};

} // namespace cw::heads

#include "cuad_classifier_plugin.moc"
