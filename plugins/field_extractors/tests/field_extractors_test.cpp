// The field extractor head: a clause's values become one "Fields" finding, the category its
// metadata declares; a clause without values gives none.
#include "app/plugins/plugin_host.h"
#include "plugins/field_extractors/field_extractor_head.h"

#include <QJsonArray>
#include <QtTest>

using namespace cw;

class FieldExtractorsTest : public QObject {
    Q_OBJECT
private slots:
    void readsTheValuesOfEachClause()
    {
        Document doc;
        doc.text = QStringLiteral("1. Term. This Agreement starts on June 21, 1999 and runs for "
                                  "thirty (30) days.\n2. Parties. The parties are friends.\n");
        Clause first;
        first.index = 0;
        first.start = 0;
        first.end = first.ownEnd = doc.text.indexOf("2. Parties");
        Clause second;
        second.index = 1;
        second.start = first.end;
        second.end = second.ownEnd = doc.text.size();
        heads::FieldExtractorHead head;
        auto found = head.find(doc, { first, second }, {});
        QVERIFY(found.ok());
        QCOMPARE(found->size(), 1);
        const Finding& f = found->front();
        QCOMPARE(f.category, QStringLiteral("Fields"));
        QCOMPARE(f.clauseIndex, 0);
        QCOMPARE(
            f.fields.value("dates").toArray().first().toString(), QStringLiteral("1999-06-21"));
    }

    void pluginDeclaresItsCategory()
    {
        PluginHost host;
        for (const LoadedHead& h : host.heads("fast")) {
            if (h.metadata.id == "field_extractors") {
                QCOMPARE(h.metadata.categories,
                    QStringList { QString::fromLatin1(heads::FieldExtractorHead::kCategory) });
                return;
            }
        }
        QFAIL(qPrintable("field_extractors not loaded: " + host.errors().join('\n')));
    }
};

QTEST_MAIN(FieldExtractorsTest)
#include "field_extractors_test.moc"
