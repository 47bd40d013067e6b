#include "ui/model_settings_dialog.h"

#include "app/desktop/app_settings.h"
#include "kernels/compute_devices.h"
#include "ui/remote_server_box.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLineEdit>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>

namespace cw::ui {

ModelSettingsDialog::ModelSettingsDialog(QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("modelSettings"));
    setWindowTitle(tr("Model settings"));
    setAcceptDrops(true);
    resize(640, 680);
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;

    auto* pathRow = new QHBoxLayout;
    m_path = new QLineEdit(this);
    m_path->setAccessibleName(tr("Model path"));
    m_path->setPlaceholderText(tr("A .gguf file or a Hugging Face model folder (drop it here)"));
    auto* browseFile = new QPushButton(tr("&File…"), this);
    auto* browseFolder = new QPushButton(tr("F&older…"), this);
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browseFile);
    pathRow->addWidget(browseFolder);
    form->addRow(tr("&Model:"), pathRow);

    m_device = new QComboBox(this);
    m_device->setAccessibleName(tr("Device"));
    for (const auto& device : cw::kernels::listComputeDevices()) {
        const bool gpu = device.kind == cw::kernels::DeviceKind::Cuda;
        const QString id
            = gpu ? QStringLiteral("cuda:%1").arg(device.index) : QStringLiteral("cpu");
        const QString label = QStringLiteral("%1 — %2 (%3 GiB)")
                                  .arg(gpu ? tr("GPU %1").arg(device.index) : tr("CPU"),
                                      QString::fromStdString(device.name))
                                  .arg(double(device.memoryBytes) / double(1ull << 30), 0, 'f', 1);
        m_device->addItem(label, id);
    }
    form->addRow(tr("&Device:"), m_device);
    m_context = new QSpinBox(this);
    m_context->setAccessibleName(tr("Context length"));
    m_context->setRange(2048, 262144);
    m_context->setSingleStep(4096);
    m_context->setSuffix(tr(" tokens"));
    form->addRow(tr("&Context:"), m_context);
    m_threads = new QSpinBox(this);
    m_threads->setAccessibleName(tr("CPU threads"));
    m_threads->setRange(0, std::max(1, QThread::idealThreadCount()));
    m_threads->setSpecialValueText(tr("all cores"));
    form->addRow(tr("CPU &threads:"), m_threads);
    layout->addLayout(form);

    m_summary = new QPlainTextEdit(this);
    m_summary->setObjectName(QStringLiteral("modelSummary"));
    m_summary->setAccessibleName(tr("Model summary and memory plan"));
    m_summary->setReadOnly(true);
    m_summary->setPlaceholderText(
        tr("Choose a model to see its architecture, size and the memory it needs."));
    layout->addWidget(m_summary, 1);
    m_remote = new RemoteServerBox(this);
    layout->addWidget(m_remote);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &ModelSettingsDialog::save);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browseFile, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Choose a GGUF model"), QString(), tr("GGUF models (*.gguf)"));
        if (!path.isEmpty())
            setModelPath(path);
    });
    connect(browseFolder, &QPushButton::clicked, this, [this] {
        const QString path
            = QFileDialog::getExistingDirectory(this, tr("Choose a Hugging Face model folder"));
        if (!path.isEmpty())
            setModelPath(path);
    });
    connect(m_path, &QLineEdit::editingFinished, this, &ModelSettingsDialog::inspect);
    connect(m_context, &QSpinBox::editingFinished, this, &ModelSettingsDialog::inspect);

    const cw::ModelSettings settings = cw::AppSettings::model();
    m_path->setText(settings.modelPath);
    m_device->setCurrentIndex(std::max(0, m_device->findData(settings.device)));
    m_context->setValue(settings.contextLength);
    m_threads->setValue(settings.threads);
    if (!settings.modelPath.isEmpty())
        inspect();
}

ModelSettingsDialog::~ModelSettingsDialog()
{
    if (m_inspect) {
        // Its finished/errorOccurred handlers write to this dialog's widgets, which are gone
        // by the time the process (a child) is destroyed and reports.
        m_inspect->disconnect(this);
        m_inspect->kill();
    }
}

void ModelSettingsDialog::setModelPath(const QString& path)
{
    m_path->setText(path);
    inspect();
}

void ModelSettingsDialog::inspect()
{
    const QString path = m_path->text().trimmed();
    if (path.isEmpty()) {
        m_summary->clear();
        return;
    }
    if (m_inspect) {
        m_inspect->kill();
        m_inspect->deleteLater();
    }
    m_inspect = new QProcess(this);
    m_summary->setPlainText(tr("Reading %1…").arg(path));
    QProcess* process = m_inspect;
    connect(process, &QProcess::finished, this,
        [this, process](int exitCode, QProcess::ExitStatus status) {
            if (process != m_inspect)
                return;
            const QByteArray out = process->readAllStandardOutput();
            if (status != QProcess::NormalExit || exitCode != 0) {
                const QString error = QString::fromUtf8(process->readAllStandardError()).trimmed();
                m_summary->setPlainText(
                    error.isEmpty() ? tr("The model could not be read.") : error);
                return;
            }
            const QJsonDocument json = QJsonDocument::fromJson(out);
            m_summary->setPlainText(json.isNull()
                    ? QString::fromUtf8(out)
                    : QString::fromUtf8(json.toJson(QJsonDocument::Indented)));
        });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError) {
        if (process == m_inspect)
            m_summary->setPlainText(
                tr("Could not run clausewright-cli: %1").arg(process->errorString()));
    });
    const QString cli
        = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("clausewright-cli"));
    process->start(cli,
        { QStringLiteral("inspect"), QStringLiteral("--model"), path, QStringLiteral("--context"),
            QString::number(m_context->value()) });
}

void ModelSettingsDialog::save()
{
    cw::ModelSettings settings;
    settings.modelPath = m_path->text().trimmed();
    settings.device = m_device->currentData().toString();
    settings.contextLength = m_context->value();
    settings.threads = m_threads->value();
    cw::AppSettings::setModel(settings);
    if (!m_remote->save())
        return; // the box says why the key was not saved
    accept();
}

void ModelSettingsDialog::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void ModelSettingsDialog::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        setModelPath(urls.first().toLocalFile());
}

} // namespace cw::ui
