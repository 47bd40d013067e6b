#include "app/desktop/model_memory_plan.h"

#include "engine/runtime/kv_pool_size.h"
#include "engine/runtime/model.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <algorithm>

namespace cw {

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("ModelMemoryPlan", text);
}

quint64 bytesOf(const QJsonValue& value)
{
    return quint64(std::max(0.0, value.toDouble()));
}

// "35.1 B", "1.2 M", "4,096": parameters as a model card counts them.
QString parameterCount(double count)
{
    if (count >= 1e9)
        return QStringLiteral("%1 B").arg(QLocale().toString(count / 1e9, 'f', 1));
    if (count >= 1e6)
        return QStringLiteral("%1 M").arg(QLocale().toString(count / 1e6, 'f', 1));
    return QLocale().toString(qint64(count));
}

QString tokens(qint64 count)
{
    return QLocale().toString(count);
}

// "Q4_K 78 %, Q6_K 14 %, F32 1 %": the storage types by their share of the weights' bytes.
QString quantizationShares(const QJsonArray& mix, quint64 weights)
{
    QList<QPair<quint64, QString>> byBytes;
    for (const QJsonValue& entry : mix)
        byBytes.append({ bytesOf(entry[QLatin1String("bytes")]),
            entry[QLatin1String("type")].toString().toUpper() });
    std::sort(byBytes.begin(), byBytes.end(),
        [](const auto& a, const auto& b) { return a.first > b.first; });
    QStringList parts;
    for (const auto& [bytes, type] : byBytes) {
        const int percent = weights > 0 ? int(100.0 * double(bytes) / double(weights) + 0.5) : 0;
        if (percent < 1 && !parts.isEmpty())
            break;
        parts.append(QStringLiteral("%1 %2 %").arg(type).arg(percent));
    }
    return parts.join(QStringLiteral(", "));
}

} // namespace

// "21.3 of 24.0 GiB": the unit once where both are in GiB.
QString memoryOfTotal(quint64 part, quint64 total)
{
    const quint64 gib = quint64(1) << 30;
    if (part >= gib && total >= gib)
        return QCoreApplication::translate("ModelMemoryPlan", "%1 of %2")
            .arg(QLocale().toString(double(part) / double(gib), 'f', 1), memorySize(total));
    return QCoreApplication::translate("ModelMemoryPlan", "%1 of %2")
        .arg(memorySize(part), memorySize(total));
}

QString memorySize(quint64 bytes)
{
    const double gib = double(bytes) / double(quint64(1) << 30);
    if (gib >= 1.0)
        return tr("%1 GiB").arg(QLocale().toString(gib, 'f', 1));
    if (bytes >= quint64(1) << 20)
        return tr("%1 MiB").arg(QLocale().toString(double(bytes) / double(1 << 20), 'f', 0));
    return tr("%1 KiB").arg(QLocale().toString(double(bytes) / 1024.0, 'f', 0));
}

Result<ModelMemoryPlan> planModelMemory(
    const QByteArray& inspectJson, const MemoryTarget& target, qint64 context)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(inspectJson, &parseError);
    if (!document.isObject())
        return makeError(
            "the model summary is not JSON: " + parseError.errorString().toStdString());
    const QJsonObject json = document.object();
    const QJsonObject memory = json[QLatin1String("memory")].toObject();
    if (memory.isEmpty() || !memory.contains(QLatin1String("weights_bytes")))
        return makeError("the model summary has no memory figures");
    if (context <= 0)
        return makeError("the context must be at least one token");

    ModelMemoryPlan plan;
    plan.modelContext = qint64(json[QLatin1String("context_length")].toDouble());
    const quint64 weights = bytesOf(memory[QLatin1String("weights_bytes")]);
    // Per token and per sequence, whatever context, batch and element size inspect was
    // asked for; the engine keeps K and V in f32.
    const double elementBytes
        = std::max(1.0, memory[QLatin1String("kv_cache_element_bytes")].toDouble(4));
    const double kvPerToken
        = memory[QLatin1String("kv_cache_bytes_per_token")].toDouble() / elementBytes * 4.0;
    const double batch = std::max(1.0, memory[QLatin1String("batch")].toDouble(1));
    const double statePerSequence
        = (memory[QLatin1String("deltanet_recurrent_state_bytes")].toDouble()
              + memory[QLatin1String("deltanet_conv_state_bytes")].toDouble())
        / batch;
    const engine::ModelOptions defaults;
    const int sequences = defaults.maxSequences; // what a review runs at once
    const qint64 blockTokens = defaults.kvBlockTokens;
    const auto poolTokens = [&](bool gpu) {
        const qint64 wanted = engine::defaultKvPoolTokens(context, sequences, gpu);
        return (wanted + blockTokens - 1) / blockTokens * blockTokens;
    };
    const quint64 states = quint64(statePerSequence * sequences);
    const QString memoryTotal = memorySize(target.memoryBytes);

    if (target.gpu) {
        const qint64 kvTokens = poolTokens(true);
        const quint64 kv = quint64(kvPerToken * double(kvTokens));
        plan.neededBytes = weights + kv + states;
        const quint64 room = target.budgetBytes > 0 && target.budgetBytes < target.memoryBytes
            ? target.budgetBytes
            : target.memoryBytes;
        plan.fits = room > 0 && plan.neededBytes + kGpuStepAllowanceBytes <= room;
        // Over the room, the least chosen routed experts may stay in host memory.
        const auto offload = engine::estimateOffload(plan.neededBytes + kGpuStepAllowanceBytes,
            bytesOf(memory[QLatin1String("routed_expert_bytes")]),
            int(memory[QLatin1String("moe_layers")].toDouble()), room);
        const QString budgetNote = room < target.memoryBytes
            ? tr(" (the GPU memory setting: %1)").arg(memorySize(room))
            : QString();
        if (!plan.fits && offload.fit == engine::OffloadEstimate::Fit::ExpertsOffloaded) {
            plan.fits = true;
            plan.headline = tr("Fits with part of the experts in host memory: %1 on %2%3.")
                                .arg(memoryOfTotal(offload.gpuBytes, room), target.label,
                                    budgetNote);
            plan.details.append(
                tr("On the GPU: %1 % of the routed experts (%2), the most often chosen, with "
                   "everything else; in host memory: %3 of experts, which the GPU reads over "
                   "PCIe. Answers come slower than with every expert on the GPU.")
                    .arg(qRound(100.0 * offload.cachedShare()))
                    .arg(memorySize(offload.cachedExpertBytes),
                        memorySize(offload.hostExpertBytes)));
        } else if (plan.fits) {
            plan.headline
                = tr("Fits: %1 on %2%3.")
                      .arg(memoryOfTotal(plan.neededBytes, room), target.label, budgetNote);
        } else if (plan.neededBytes <= room) {
            plan.headline
                = tr("May not fit: %1 on %2, and each step needs working memory too "
                     "(about %3). A shorter context or a smaller quantization leaves room.")
                      .arg(memoryOfTotal(plan.neededBytes, room), target.label,
                          memorySize(kGpuStepAllowanceBytes));
        } else {
            plan.headline = tr("Does not fit: needs %1, %2 has %3%4. A shorter context, a "
                               "smaller quantization or the CPU would do.")
                                .arg(memorySize(plan.neededBytes), target.label, memoryTotal,
                                    budgetNote);
        }
        const bool offloaded = offload.fit == engine::OffloadEstimate::Fit::ExpertsOffloaded
            && plan.headline.startsWith(tr("Fits with part"));
        QString where
            = (offloaded ? tr("With every expert on the GPU it would take: weights %1; KV cache "
                              "%2 (%3 tokens: two contexts of %4 and 1,024 for each of %5 more "
                              "sequences)")
                         : tr("On the GPU: weights %1; KV cache %2 (%3 tokens: two contexts of %4 "
                              "and 1,024 for each of %5 more sequences)"))
                  .arg(memorySize(weights), memorySize(kv), tokens(kvTokens), tokens(context))
                  .arg(sequences - 1);
        if (states > 0)
            where
                += tr("; recurrent state %1 (%2 sequences)").arg(memorySize(states)).arg(sequences);
        plan.details.append(where + QLatin1Char('.'));
        if (plan.fits && offload.fit == engine::OffloadEstimate::Fit::Whole)
            plan.details.append(tr("Left: %1, of which each step's working memory takes some "
                                   "(the exact total is checked when the model loads).")
                                    .arg(memorySize(room - plan.neededBytes)));
    } else {
        // The CPU maps the weights from the file and grows the KV cache as the text does.
        const quint64 kvTwo = quint64(kvPerToken * double(2 * context));
        const quint64 kvMost = quint64(kvPerToken * double(poolTokens(false)));
        plan.neededBytes = weights + kvTwo + states;
        plan.fits = target.memoryBytes > 0 && plan.neededBytes <= target.memoryBytes;
        plan.headline = plan.fits
            ? tr("Fits: %1 of memory, on %2.")
                  .arg(memoryOfTotal(plan.neededBytes, target.memoryBytes), target.label)
            : tr("Does not fit: needs %1, this computer has %2 of memory. The weights would be "
                 "read from the disk again and again: very slow.")
                  .arg(memorySize(plan.neededBytes), memoryTotal);
        QString where
            = tr("In memory: weights %1, mapped from the file (the system keeps them "
                 "in its file cache); KV cache %2 for two contexts of %3 tokens, "
                 "growing with the text up to %4")
                  .arg(memorySize(weights), memorySize(kvTwo), tokens(context), memorySize(kvMost));
        if (states > 0)
            where
                += tr("; recurrent state %1 (%2 sequences)").arg(memorySize(states)).arg(sequences);
        plan.details.append(where + QLatin1Char('.'));
    }

    const QJsonObject parameters = json[QLatin1String("parameters")].toObject();
    QString model
        = tr("%1 (%2): %3 parameters, %4 active per token")
              .arg(json[QLatin1String("name")].toString(),
                  json[QLatin1String("architecture")].toString(),
                  parameterCount(parameters[QLatin1String("total")].toDouble()),
                  parameterCount(parameters[QLatin1String("active_per_token")].toDouble()));
    const QString shares
        = quantizationShares(json[QLatin1String("quantization")].toArray(), weights);
    if (!shares.isEmpty())
        model += tr("; stored as %1").arg(shares);
    model += plan.modelContext > 0 ? tr("; context up to %1 tokens.").arg(tokens(plan.modelContext))
                                   : tr("; the file does not say its longest context.");
    plan.details.append(model);
    return plan;
}

} // namespace cw
