#include "app/desktop/app_settings.h"

#include <QSettings>

namespace cw {

namespace {
constexpr int kMaxRecentFiles = 10;
}

ModelSettings AppSettings::model()
{
    QSettings settings;
    ModelSettings model;
    model.modelPath = settings.value(QStringLiteral("model/path")).toString();
    model.device = settings.value(QStringLiteral("model/device"), model.device).toString();
    model.contextLength
        = settings.value(QStringLiteral("model/context"), model.contextLength).toInt();
    model.threads = settings.value(QStringLiteral("model/threads"), model.threads).toInt();
    const QString precision
        = settings.value(QStringLiteral("model/precision"), model.precision).toString();
    // A value edited by hand that the engine does not know falls back to the default.
    if (precision == QLatin1String("f32") || precision == QLatin1String("tf32")
        || precision == QLatin1String("bf16"))
        model.precision = precision;
    bool number = false;
    const double gpuMemory
        = settings.value(QStringLiteral("model/gpuMemoryGiB"), 0.0).toDouble(&number);
    model.gpuMemoryGiB = number && gpuMemory >= 0.0 && gpuMemory < 1e6 ? gpuMemory : 0.0;
    return model;
}

void AppSettings::setModel(const ModelSettings& model)
{
    QSettings settings;
    settings.setValue(QStringLiteral("model/path"), model.modelPath);
    settings.setValue(QStringLiteral("model/device"), model.device);
    settings.setValue(QStringLiteral("model/context"), model.contextLength);
    settings.setValue(QStringLiteral("model/threads"), model.threads);
    settings.setValue(QStringLiteral("model/precision"), model.precision);
    settings.setValue(QStringLiteral("model/gpuMemoryGiB"), model.gpuMemoryGiB);
}

RemoteServerSettings AppSettings::remoteServer()
{
    QSettings settings;
    RemoteServerSettings remote;
    remote.baseUrl = settings.value(QStringLiteral("remote/url")).toString();
    remote.model = settings.value(QStringLiteral("remote/model")).toString();
    remote.order
        = generation::backendOrderFromKey(settings.value(QStringLiteral("remote/order")).toString())
              .value_or(generation::BackendOrder::LocalOnly);
    return remote;
}

void AppSettings::setRemoteServer(const RemoteServerSettings& remote)
{
    QSettings settings;
    settings.setValue(QStringLiteral("remote/url"), remote.baseUrl);
    settings.setValue(QStringLiteral("remote/model"), remote.model);
    settings.setValue(QStringLiteral("remote/order"), generation::backendOrderKey(remote.order));
}

QString AppSettings::playbookPath()
{
    return QSettings().value(QStringLiteral("review/playbook")).toString();
}

void AppSettings::setPlaybookPath(const QString& path)
{
    QSettings().setValue(QStringLiteral("review/playbook"), path);
}

QString AppSettings::language()
{
    return QSettings().value(QStringLiteral("ui/language")).toString();
}

void AppSettings::setLanguage(const QString& language)
{
    QSettings().setValue(QStringLiteral("ui/language"), language);
}

QStringList AppSettings::recentFiles()
{
    return QSettings().value(QStringLiteral("ui/recentFiles")).toStringList();
}

void AppSettings::addRecentFile(const QString& path)
{
    QStringList files = recentFiles();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    QSettings().setValue(QStringLiteral("ui/recentFiles"), files);
}

QString AppSettings::firstRunChoice()
{
    return QSettings().value(QStringLiteral("firstRun/choice")).toString();
}

void AppSettings::setFirstRunChoice(const QString& choice)
{
    QSettings().setValue(QStringLiteral("firstRun/choice"), choice);
}

QByteArray AppSettings::windowGeometry()
{
    return QSettings().value(QStringLiteral("ui/geometry")).toByteArray();
}

QByteArray AppSettings::windowState()
{
    return QSettings().value(QStringLiteral("ui/state")).toByteArray();
}

void AppSettings::setWindowGeometry(const QByteArray& geometry, const QByteArray& state)
{
    QSettings settings;
    settings.setValue(QStringLiteral("ui/geometry"), geometry);
    settings.setValue(QStringLiteral("ui/state"), state);
}

bool AppSettings::codePanelShown()
{
    return QSettings().value(QStringLiteral("ui/codePanelShown"), false).toBool();
}

QByteArray AppSettings::codeSplitterState()
{
    return QSettings().value(QStringLiteral("ui/codeSplitter")).toByteArray();
}

void AppSettings::setCodePanel(bool shown, const QByteArray& splitterState)
{
    QSettings settings;
    settings.setValue(QStringLiteral("ui/codePanelShown"), shown);
    settings.setValue(QStringLiteral("ui/codeSplitter"), splitterState);
}

} // namespace cw
