// The CUAD clause classifier as a Qt plugin. Who it is (id, categories, its model file) is
// stated once, in cuad_classifier.json; the host reads it and hands over the model's path.
#include "app/plugins/clause_head.h"
#include "plugins/cuad_classifier/cuad_classifier_head.h"

#include <QObject>

namespace cw::heads {

class CuadClassifierPlugin : public QObject, public ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "cuad_classifier.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    Result<std::unique_ptr<ClauseHead>> createHead(const HeadSetup& setup) const override
    {
        return CuadClassifierHead::load(setup.dataPath);
    }
};

} // namespace cw::heads

#include "cuad_classifier_plugin.moc"
