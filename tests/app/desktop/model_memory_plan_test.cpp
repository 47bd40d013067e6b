// The memory plan Model Settings shows, from inspect's JSON: figures worked out by hand for a
// model of the target's attention geometry (10 attention layers of 2 KV heads of 256: 40,960
// bytes of f32 K and V per token; 60 MiB of recurrent state per sequence; 18.5 GiB of weights).
#include "app/desktop/model_memory_plan.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// As `inspect --kv-bytes N --batch B` prints it.
QByteArray inspectJson(int kvBytes = 4, int batch = 1, qint64 modelContext = 262144)
{
    QJsonObject memory {
        { "context", 4096 },
        { "batch", batch },
        { "attention_layers", 10 },
        { "deltanet_layers", 30 },
        { "weights_bytes", 18.5 * kGiB },
        { "kv_cache_element_bytes", kvBytes },
        { "kv_cache_bytes_per_token", 10 * 2 * 512 * kvBytes },
        { "deltanet_recurrent_state_bytes", double(60 << 20) * batch },
        { "deltanet_conv_state_bytes", 0 },
    };
    QJsonObject json {
        { "name", "Qwen3.6-35B-A3B" },
        { "architecture", "qwen35moe" },
        { "context_length", modelContext },
        { "parameters", QJsonObject { { "total", 35.1e9 }, { "active_per_token", 3.3e9 } } },
        { "quantization",
            QJsonArray { QJsonObject { { "type", "q4_K" }, { "bytes", 16.0 * kGiB } },
                QJsonObject { { "type", "q6_K" }, { "bytes", 2.4 * kGiB } },
                QJsonObject { { "type", "f32" }, { "bytes", 0.1 * kGiB } } } },
        { "memory", memory },
    };
    return QJsonDocument(json).toJson();
}

cw::MemoryTarget gpu24()
{
    return { true, QStringLiteral("GPU 0 (Test GPU)"), quint64(24.0 * kGiB) };
}

} // namespace

class ModelMemoryPlanTest : public QObject {
    Q_OBJECT
private slots:
    void fitsOnTheCardWithTheKvPoolTheEngineAllocates()
    {
        // KV pool on a GPU: two contexts of 32,768 plus 1,024 for each of 15 more sequences,
        // 80,896 tokens x 40,960 B = 3.09 GiB; states 16 x 60 MiB = 0.94 GiB;
        // 18.5 + 3.09 + 0.94 = 22.5 GiB, with 1 GiB for the steps under 24.
        const auto plan = cw::planModelMemory(inspectJson(), gpu24(), 32768);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message.c_str());
        QVERIFY(plan->fits);
        QCOMPARE(plan->modelContext, qint64(262144));
        QCOMPARE(plan->headline, QStringLiteral("Fits: 22.5 of 24.0 GiB on GPU 0 (Test GPU)."));
        const QString text = plan->text();
        QVERIFY2(text.contains(QStringLiteral("weights 18.5 GiB")), qPrintable(text));
        QVERIFY2(
            text.contains(QStringLiteral("KV cache 3.1 GiB (80,896 tokens")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("recurrent state 960 MiB (16 sequences)")),
            qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("Q4_K 86 %, Q6_K 13 %, F32 1 %")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("35.1 B parameters, 3.3 B active per token")),
            qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("context up to 262,144 tokens")), qPrintable(text));
    }

    void aLongerContextDoesNotFit()
    {
        // 2 x 131,072 + 15,360 = 277,504 tokens: 10.6 GiB of KV; 30.0 GiB in all.
        const auto plan = cw::planModelMemory(inspectJson(), gpu24(), 131072);
        QVERIFY(plan.ok());
        QVERIFY(!plan->fits);
        QVERIFY2(plan->headline.startsWith(QStringLiteral(
                     "Does not fit: needs 30.0 GiB, GPU 0 (Test GPU) has 24.0 GiB.")),
            qPrintable(plan->headline));
    }

    void warnsWhenOnlyTheStepsWorkingMemoryIsShort()
    {
        const cw::MemoryTarget card { true, QStringLiteral("GPU 1 (Small GPU)"),
            quint64(23.0 * kGiB) };
        const auto plan = cw::planModelMemory(inspectJson(), card, 32768);
        QVERIFY(plan.ok());
        QVERIFY(!plan->fits);
        QVERIFY2(plan->headline.startsWith(QStringLiteral("May not fit: 22.5 of 23.0 GiB")),
            qPrintable(plan->headline));
    }

    void readsAnyKvElementSizeAndBatch()
    {
        // inspect's own defaults (2-byte elements) or several sequences give the same plan.
        const auto f32 = cw::planModelMemory(inspectJson(4, 1), gpu24(), 32768);
        const auto f16 = cw::planModelMemory(inspectJson(2, 4), gpu24(), 32768);
        QVERIFY(f32.ok() && f16.ok());
        QCOMPARE(f16->neededBytes, f32->neededBytes);
    }

    void onTheCpuTheKvCacheGrows()
    {
        // Two contexts: 65,536 x 40,960 B = 2.5 GiB; at most 8 x 32,768 tokens = 10.0 GiB.
        const cw::MemoryTarget cpu { false, QStringLiteral("the CPU (Test CPU)"),
            quint64(64.0 * kGiB) };
        const auto plan = cw::planModelMemory(inspectJson(), cpu, 32768);
        QVERIFY(plan.ok());
        QVERIFY(plan->fits);
        QCOMPARE(plan->headline,
            QStringLiteral("Fits: 21.9 of 64.0 GiB of memory, on the CPU (Test CPU)."));
        QVERIFY2(plan->text().contains(QStringLiteral("growing with the text up to 10.0 GiB")),
            qPrintable(plan->text()));
        const cw::MemoryTarget small { false, QStringLiteral("the CPU"), quint64(16.0 * kGiB) };
        const auto tooSmall = cw::planModelMemory(inspectJson(), small, 32768);
        QVERIFY(tooSmall.ok());
        QVERIFY(!tooSmall->fits);
        QVERIFY(tooSmall->headline.startsWith(QStringLiteral("Does not fit: needs 21.9 GiB")));
    }

    void refusesWhatIsNotASummary()
    {
        const auto notJson
            = cw::planModelMemory("error: model.gguf: not a GGUF file", gpu24(), 4096);
        QVERIFY(!notJson.ok());
        QVERIFY2(QString::fromStdString(notJson.error().message).contains("not JSON"),
            notJson.error().message.c_str());
        const auto noMemory = cw::planModelMemory(R"({"name": "x"})", gpu24(), 4096);
        QVERIFY(!noMemory.ok());
        QVERIFY(QString::fromStdString(noMemory.error().message).contains("no memory figures"));
    }
};

QTEST_GUILESS_MAIN(ModelMemoryPlanTest)
#include "model_memory_plan_test.moc"
