// A clause head from outside the tree: a clause is a finding of a category when it holds one
// of the category's terms, read from the data file its metadata names.
#include "app/plugins/clause_head.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QObject>

namespace {

class KeywordHead final : public cw::ClauseHead {
public:
    explicit KeywordHead(QMap<QString, QStringList> terms)
        : m_terms(std::move(terms))
    {
    }

    cw::Result<QList<cw::Finding>> find(const cw::Document& document,
        const QList<cw::Clause>& clauses, const cw::HeadRunContext& context) const override
    {
        QList<cw::Finding> findings;
        for (const cw::Clause& clause : clauses) {
            if (context.cancelled())
                return cw::makeError("cancelled");
            const qsizetype end = clause.ownEnd > clause.start ? clause.ownEnd : clause.end;
            const QString text = document.text.mid(clause.start, end - clause.start);
            for (auto it = m_terms.begin(); it != m_terms.end(); ++it) {
                for (const QString& term : it.value()) {
                    if (!text.contains(term, Qt::CaseInsensitive))
                        continue;
                    cw::Finding f;
                    f.category = it.key();
                    f.clauseIndex = clause.index;
                    f.start = clause.start;
                    f.end = end;
                    f.page = document.pageAt(clause.start);
                    f.text = text;
                    f.source = QStringLiteral("fast");
                    f.rationale = QStringLiteral("the clause says \"%1\"").arg(term);
                    findings.append(f);
                    break;
                }
            }
        }
        return findings;
    }

private:
    QMap<QString, QStringList> m_terms;
};

class KeywordHeadPlugin : public QObject, public cw::ClauseHeadFactory {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID CW_CLAUSE_HEAD_FACTORY_IID FILE "keyword_head.json")
    Q_INTERFACES(cw::ClauseHeadFactory)
public:
    cw::Result<std::unique_ptr<cw::ClauseHead>> createHead(
        const cw::HeadSetup& setup) const override
    {
        QFile file(setup.dataPath);
        if (!file.open(QIODevice::ReadOnly))
            return cw::makeError(setup.dataPath.toStdString() + ": cannot read");
        const QJsonDocument json = QJsonDocument::fromJson(file.readAll());
        if (!json.isObject())
            return cw::makeError(setup.dataPath.toStdString() + ": not a JSON object");
        QMap<QString, QStringList> terms;
        const QJsonObject object = json.object();
        for (auto it = object.begin(); it != object.end(); ++it) {
            for (const QJsonValue& term : it.value().toArray())
                terms[it.key()].append(term.toString());
        }
        return std::unique_ptr<cw::ClauseHead>(std::make_unique<KeywordHead>(std::move(terms)));
    }
};

} // namespace

#include "keyword_head_plugin.moc"
