// The clause-head host: what it loads from where, the plugin ABI and types versions it
// refuses, the metadata's data file it hands over, the categories it enforces.
#include "app/plugins/plugin_host.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

namespace {
const QString kTestPlugins = QStringLiteral(CW_TEST_PLUGIN_DIR);

const LoadedHead* headOf(const QList<LoadedHead>& heads, const QString& id)
{
    for (const LoadedHead& h : heads) {
        if (h.metadata.id == id)
            return &h;
    }
    return nullptr;
}

QString errorAbout(const PluginHost& host, const QString& file)
{
    for (const QString& e : host.errors()) {
        if (e.contains(file))
            return e;
    }
    return {};
}
} // namespace

class PluginHostTest : public QObject {
    Q_OBJECT
private slots:
    void loadsBuiltInPluginsFromTheBuildTree()
    {
        PluginHost host;
        const auto heads = host.heads("fast");
        for (const QString id : { "cuad_classifier", "field_extractors" }) {
            const LoadedHead* h = headOf(heads, id);
            QVERIFY2(h, qPrintable(id + ": " + host.errors().join('\n')));
            QVERIFY2(
                h->origin.startsWith(QStringLiteral(CW_PLUGIN_BUILD_DIR)), qPrintable(h->origin));
        }
        QVERIFY(host.searchFolders().contains(QDir::cleanPath(CW_PLUGIN_BUILD_DIR)));
    }

    void skipsBrokenFilesAndNamesThem()
    {
        QTemporaryDir dir;
        QFile broken(dir.filePath("broken_head.so"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("not a shared library");
        broken.close();
        PluginHost host({ dir.path() });
        QVERIFY(headOf(host.heads(), "cuad_classifier"));
        QVERIFY2(
            !errorAbout(host, "broken_head.so").isEmpty(), qPrintable(host.errors().join('\n')));
    }

    void refusesAnotherPluginAbiNamingFileAndVersions()
    {
        PluginHost host({ kTestPlugins });
        QVERIFY(!headOf(host.heads(), "old_abi_head"));
        const QString e = errorAbout(host, "old_abi_head.so");
        QVERIFY2(e.contains("head plugin ABI 1") && e.contains("loads head plugin ABI 2"),
            qPrintable(host.errors().join('\n')));
    }

    void refusesAnotherTypesVersion()
    {
        PluginHost host({ kTestPlugins });
        QVERIFY(!headOf(host.heads(), "other_types_head"));
        const QString e = errorAbout(host, "other_types_head.so");
        QVERIFY2(e.contains(QStringLiteral("types version %1").arg(kHeadTypesVersion + 1))
                && e.contains(QStringLiteral("types version %1").arg(kHeadTypesVersion)),
            qPrintable(host.errors().join('\n')));
    }

    void metadataComesFromTheJsonAndDataPathIsHandedOver()
    {
        PluginHost host({ kTestPlugins });
        const LoadedHead* h = headOf(host.heads(), "probe_head");
        QVERIFY2(h, qPrintable(host.errors().join('\n')));
        QCOMPARE(h->metadata.name, QStringLiteral("Probe head (tests)"));
        QCOMPARE(h->metadata.categories, QStringList { "Governing Law" });
        QCOMPARE(h->metadata.data, QStringLiteral("probe_head.txt"));
        Document doc;
        doc.text = QStringLiteral("This Agreement is governed by the laws of Texas.");
        auto run = runHead(*h, doc, {}, {});
        QVERIFY(run.ok());
        QCOMPARE(run->findings.size(), 1);
        QCOMPARE(run->findings[0].rationale, QStringLiteral("read from the data file"));
    }

    void dropsUndeclaredCategoriesNamingPluginAndCategory()
    {
        PluginHost host({ kTestPlugins });
        const LoadedHead* h = headOf(host.heads(), "probe_head");
        QVERIFY(h);
        Document doc;
        doc.text = QStringLiteral("Any text at all.");
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression("probe_head .*\"Secret Sauce\""));
        auto run = runHead(*h, doc, {}, {});
        QVERIFY(run.ok());
        for (const Finding& f : run->findings)
            QCOMPARE(f.category, QStringLiteral("Governing Law"));
        QCOMPARE(run->dropped.size(), 1); // one message for the two findings of the category
        QVERIFY(run->dropped[0].contains("probe_head") && run->dropped[0].contains("Secret Sauce"));
    }

    void refusesAPluginWhoseDataFileIsMissing()
    {
        QTemporaryDir dir;
        QVERIFY(QFile::copy(kTestPlugins + "/probe_head.so", dir.filePath("probe_head.so")));
        PluginHost host({ dir.path() });
        QVERIFY(!headOf(host.heads(), "probe_head"));
        const QString e = errorAbout(host, dir.filePath("probe_head.so"));
        QVERIFY2(e.contains("probe_head.txt") && e.contains("missing"),
            qPrintable(host.errors().join('\n')));
    }

    void aUserCopyReplacesABuiltInOne()
    {
        QTemporaryDir dir;
        const QString built = QStringLiteral(CW_PLUGIN_BUILD_DIR "/field_extractors.so");
        QVERIFY(QFile::copy(built, dir.filePath("my_field_extractors.so")));
        PluginHost host({ dir.path() });
        const LoadedHead* h = headOf(host.heads(), "field_extractors");
        QVERIFY(h);
        QCOMPARE(h->origin, dir.filePath("my_field_extractors.so"));
    }

    void noHeadsMessageNamesTheFoldersSearched()
    {
        QTemporaryDir dir;
        PluginHost host({ dir.path() });
        const QString message = host.noHeadsMessage();
        QVERIFY2(message.contains(dir.path()) && message.contains(CW_PLUGIN_BUILD_DIR),
            qPrintable(message));
    }

    void metadataErrorsNameTheField()
    {
        auto bad = headMetadataFromJson(QJsonObject { { "id", "x" }, { "name", "X" },
                                            { "kind", "slow" }, { "categories", QJsonArray() } },
            "x.json");
        QVERIFY(!bad.ok());
        QVERIFY(QString::fromStdString(bad.error().message).contains("'kind'"));
        auto badData
            = headMetadataFromJson(QJsonObject { { "id", "x" }, { "name", "X" }, { "kind", "fast" },
                                       { "categories", QJsonArray() }, { "data", 3 } },
                "x.json");
        QVERIFY(!badData.ok());
        QVERIFY(QString::fromStdString(badData.error().message).contains("'data'"));
    }
};

QTEST_MAIN(PluginHostTest)
#include "plugin_host_test.moc"
