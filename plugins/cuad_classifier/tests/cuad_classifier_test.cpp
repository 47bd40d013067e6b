// The CUAD classifier head: its model is the metadata's data file, it names a missing one, and
// as loaded by the host it finds its categories in a contract it was not trained on.
#include "app/heads/cuad_dataset.h"
#include "app/plugins/plugin_host.h"
#include "plugins/cuad_classifier/cuad_classifier_head.h"

#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

class CuadClassifierTest : public QObject {
    Q_OBJECT
private slots:
    void namesAMissingModelFile()
    {
        QTemporaryDir empty;
        auto head = heads::CuadClassifierHead::load(empty.filePath("cuad_classifier.cwm"));
        QVERIFY(!head.ok());
        QVERIFY(QString::fromStdString(head.error().message).contains("cuad_classifier.cwm"));
        auto none = heads::CuadClassifierHead::load({});
        QVERIFY(!none.ok());
        QVERIFY(QString::fromStdString(none.error().message).contains("'data'"));
    }

    void pluginDeclaresWhatItReports()
    {
        PluginHost host;
        const LoadedHead* head = nullptr;
        for (const LoadedHead& h : host.heads())
            head = h.metadata.id == "cuad_classifier" ? &h : head;
        QVERIFY2(head, qPrintable(host.errors().join('\n')));
        QVERIFY(head->origin.endsWith("cuad_classifier.so"));
        QCOMPARE(head->metadata.data, QStringLiteral("cuad_classifier.cwm"));
        // The JSON lists the categories the model was trained on, no more and no fewer.
        QCOMPARE(QSet<QString>(head->metadata.categories.begin(), head->metadata.categories.end()),
            QSet<QString>(heads::cuadCategories().begin(), heads::cuadCategories().end()));

        auto contracts = heads::readLabelledContracts(CW_TEST_DATA_DIR "/heads/heldout.jsonl.xz");
        QVERIFY(contracts.ok());
        Document doc;
        doc.text = contracts->front().text;
        auto run = runHead(*head, doc, {}, {});
        QVERIFY(run.ok());
        QVERIFY(run->dropped.isEmpty());
        QSet<QString> found;
        for (const Finding& f : run->findings)
            found.insert(f.category);
        QVERIFY2(
            found.contains("Governing Law"), qPrintable(QStringList(found.values()).join(", ")));
    }
};

QTEST_MAIN(CuadClassifierTest)
#include "cuad_classifier_test.moc"
