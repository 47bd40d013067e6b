// A head for the host's tests: reads its data file (named in probe_head.json) and reports one
// finding of the category it declares, quoting the data, and one of a category it does not.
#include "app/plugins/clause_head.h"

#include <QFile>
#include <QObject>

namespace {

class ProbeHead final : public cw::ClauseHead {
public:
    explicit ProbeHead(QString data)
        : m_data(std::move(data))
    {
    }
    cw::Result<QList<cw::Finding>> find(const cw::Document& document, const QList<cw::Clause>&,
        const cw::HeadRunContext&) const override
    {
        cw::Finding declared;
        declared.category = QStringLiteral("Governing Law");
        declared.start = 0;
        declared.end = qMin<qsizetype>(10, document.text.size());
        declared.rationale = m_data;
        cw::Finding undeclared = declared;
        undeclared.category = QStringLiteral("Secret Sauce");
        return QList<cw::Finding> { declared, undeclared, undeclared };
    }

private:
    QString m_data;
};

class ProbeHeadPlugin : public QObject, public cw::ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "probe_head.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    cw::Result<std::unique_ptr<cw::ClauseHead>> createHead(
        const cw::HeadSetup& setup) const override
    {
        QFile file(setup.dataPath);
        if (!file.open(QIODevice::ReadOnly))
            return cw::makeError("cannot read " + setup.dataPath.toStdString());
        return std::unique_ptr<cw::ClauseHead>(
            std::make_unique<ProbeHead>(QString::fromUtf8(file.readAll()).trimmed()));
    }
};

} // namespace

#include "probe_head_plugin.moc"
