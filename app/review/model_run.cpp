#include "app/review/model_run.h"

#include <QJsonObject>
#include <QLocale>

namespace cw {

std::optional<ModelRun> modelRunOf(const Review& review)
{
    const QJsonObject model = review.settings.value(QStringLiteral("model_review")).toObject();
    const QString device = model.value(QStringLiteral("device")).toString();
    if (device.isEmpty())
        return std::nullopt;
    ModelRun run;
    run.device = device;
    run.seconds = model.value(QStringLiteral("seconds")).toDouble();
    run.generatedTokens = model.value(QStringLiteral("generated_tokens")).toInteger();
    return run;
}

void recordModelRun(Review& review, const ModelRun& run)
{
    QJsonObject model = review.settings.value(QStringLiteral("model_review")).toObject();
    model.insert(QStringLiteral("device"), run.device);
    model.insert(QStringLiteral("seconds"), run.seconds);
    model.insert(QStringLiteral("generated_tokens"), run.generatedTokens);
    model.insert(QStringLiteral("tokens_per_second"), run.tokensPerSecond());
    review.settings.insert(QStringLiteral("model_review"), model);
}

QString modelRunText(const ModelRun& run)
{
    // The C locale: reports and the status bar read the same in every language setting.
    const QLocale c = QLocale::c();
    return QStringLiteral("%1 · %2 tokens/s · %3 s")
        .arg(
            run.device, c.toString(run.tokensPerSecond(), 'f', 1), c.toString(run.seconds, 'f', 1));
}

} // namespace cw
