#include "ui/model_settings_dialog.h"

#include "app/desktop/app_settings.h"
#include "app/desktop/model_memory_plan.h"
#include "kernels/compute_devices.h"
#include "ui/remote_server_box.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include <utility>

namespace cw::ui {

namespace {

constexpr int kMinimumContext = 2048;
constexpr int kMaximumContext = 262144;
constexpr int kTargetLabelRole = Qt::UserRole + 1; // "GPU 0 (NVIDIA H200)"
constexpr int kMemoryRole = Qt::UserRole + 2; // the device's memory in bytes

} // namespace

ModelSettingsDialog::ModelSettingsDialog(QWidget* parent)
    : QDialog(parent)
    , m_inspectProgram(
          QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("clausewright-cli")))
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
    // A row of several widgets: the label needs its buddy named, or it shows the "&" itself.
    auto* pathLabel = new QLabel(tr("&Model:"), this);
    pathLabel->setBuddy(m_path);
    form->addRow(pathLabel, pathRow);

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
        const QString target = gpu
            ? tr("GPU %1 (%2)").arg(device.index).arg(QString::fromStdString(device.name))
            : tr("the CPU (%1)").arg(QString::fromStdString(device.name));
        m_device->setItemData(m_device->count() - 1, target, kTargetLabelRole);
        m_device->setItemData(
            m_device->count() - 1, QVariant::fromValue(quint64(device.memoryBytes)), kMemoryRole);
    }
    form->addRow(tr("&Device:"), m_device);
    m_context = new QSpinBox(this);
    m_context->setAccessibleName(tr("Context length"));
    m_context->setRange(kMinimumContext, kMaximumContext);
    m_context->setSingleStep(4096);
    m_context->setSuffix(tr(" tokens"));
    form->addRow(tr("&Context:"), m_context);
    m_contextNote = new QLabel(this);
    m_contextNote->setObjectName(QStringLiteral("contextNote"));
    m_contextNote->setWordWrap(true);
    m_contextNote->hide();
    form->addRow(QString(), m_contextNote);
    m_threads = new QSpinBox(this);
    m_threads->setAccessibleName(tr("CPU threads"));
    m_threads->setRange(0, std::max(1, QThread::idealThreadCount()));
    m_threads->setSpecialValueText(tr("all cores"));
    form->addRow(tr("CPU &threads:"), m_threads);
    // Advanced: the arithmetic (engine/runtime/precision.h). bf16 is what a user wants unless a
    // figure must match the reference.
    m_precision = new QComboBox(this);
    m_precision->setAccessibleName(tr("Precision"));
    m_precision->addItem(tr("bf16 — fastest (default)"), QStringLiteral("bf16"));
    m_precision->addItem(tr("tf32 — TF32 tensor cores for long products"), QStringLiteral("tf32"));
    m_precision->addItem(tr("f32 — the reference, slowest"), QStringLiteral("f32"));
    m_precision->setToolTip(tr("How the model computes. bf16 rounds its products a little (on the "
                               "tiny test models 0.4-19 % of the largest logit, less than "
                               "transformers' own bf16); f32 matches the reference float32."));
    form->addRow(tr("P&recision (advanced):"), m_precision);
    // The GPU memory the model may take: under the model's size its least chosen experts stay
    // in host memory (engine::ModelOptions::gpuMemoryGiB).
    m_gpuMemory = new QDoubleSpinBox(this);
    m_gpuMemory->setAccessibleName(tr("GPU memory"));
    m_gpuMemory->setRange(0.0, 4096.0);
    m_gpuMemory->setDecimals(1);
    m_gpuMemory->setSingleStep(1.0);
    m_gpuMemory->setSuffix(tr(" GiB"));
    m_gpuMemory->setSpecialValueText(tr("all free memory"));
    m_gpuMemory->setToolTip(tr("How much of the GPU's memory the model may take. A model larger "
                               "than this keeps its least often chosen experts in the computer's "
                               "memory, which the GPU reads as needed: slower, but it runs."));
    form->addRow(tr("&GPU memory:"), m_gpuMemory);
    layout->addLayout(form);

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("modelSummary"));
    m_summary->setAccessibleName(tr("Model summary and memory plan"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setFrameShape(QFrame::StyledPanel);
    m_summary->setMargin(8);
    m_summary->setMinimumHeight(120);
    m_summary->setText(tr("Choose a model to see what it is and where its memory would go."));
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
    connect(m_path, &QLineEdit::editingFinished, this, [this] {
        if (m_path->text().trimmed() != m_inspectedPath || m_state == ModelState::Unknown)
            inspect(); // leaving the field unchanged reads nothing again
    });
    // The plan follows the context and the device without reading the model again.
    connect(m_context, &QSpinBox::valueChanged, this, &ModelSettingsDialog::showPlan);
    connect(m_device, &QComboBox::currentIndexChanged, this, &ModelSettingsDialog::showPlan);
    connect(m_gpuMemory, &QDoubleSpinBox::valueChanged, this, &ModelSettingsDialog::showPlan);
    // Only a GPU takes the setting.
    auto enableGpuMemory = [this] {
        m_gpuMemory->setEnabled(m_device->currentData().toString().startsWith(QLatin1String("cuda:")));
    };
    connect(m_device, &QComboBox::currentIndexChanged, this, enableGpuMemory);

    const cw::ModelSettings settings = cw::AppSettings::model();
    m_path->setText(settings.modelPath);
    m_device->setCurrentIndex(std::max(0, m_device->findData(settings.device)));
    m_context->setValue(settings.contextLength);
    m_threads->setValue(settings.threads);
    m_precision->setCurrentIndex(std::max(0, m_precision->findData(settings.precision)));
    m_gpuMemory->setValue(settings.gpuMemoryGiB);
    enableGpuMemory();
    if (!settings.modelPath.isEmpty())
        inspect();
}

ModelSettingsDialog::~ModelSettingsDialog()
{
    // The path field reports editingFinished when it loses focus as the dialog goes away:
    // that must not start another reading of the model into a half-destroyed dialog.
    m_path->disconnect(this);
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

QString ModelSettingsDialog::summaryText() const
{
    return m_summary->text();
}

void ModelSettingsDialog::inspect()
{
    const QString path = m_path->text().trimmed();
    if (m_inspect) {
        m_inspect->disconnect(this);
        m_inspect->kill();
        m_inspect->deleteLater();
        m_inspect = nullptr;
    }
    m_inspectedPath = path;
    m_inspectJson.clear();
    m_modelContext = 0;
    m_context->setMaximum(kMaximumContext);
    m_contextNote->hide();
    if (path.isEmpty()) {
        m_state = ModelState::Unknown;
        m_summary->setText(tr("No model: reviews use the fast heads only."));
        return;
    }
    m_state = ModelState::Reading;
    m_inspect = new QProcess(this);
    m_summary->setText(tr("Reading %1…").arg(path));
    QProcess* process = m_inspect;
    connect(process, &QProcess::finished, this,
        [this, process](int exitCode, QProcess::ExitStatus status) {
            if (process != m_inspect)
                return;
            const QByteArray out = process->readAllStandardOutput();
            if (status != QProcess::NormalExit || exitCode != 0) {
                const QString error = QString::fromUtf8(process->readAllStandardError()).trimmed();
                m_state = ModelState::Unreadable;
                m_summary->setText(error.isEmpty() ? tr("The model could not be read.") : error);
                if (std::exchange(m_saveWhenRead, false))
                    save(); // says why it does not
                return;
            }
            m_state = ModelState::Read;
            m_inspectJson = out;
            fitContextToModel();
            showPlan();
            if (std::exchange(m_saveWhenRead, false))
                save();
        });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError) {
        if (process != m_inspect)
            return;
        // Without the inspector nothing can be checked; saving stays possible.
        m_state = ModelState::Unknown;
        m_summary->setText(
            tr("Could not run %1 to read the model: %2")
                .arg(QFileInfo(m_inspectProgram).fileName(), process->errorString()));
        if (std::exchange(m_saveWhenRead, false))
            save();
    });
    // The context is the model's own in the summary: the plan is worked out here for the
    // context chosen, per token and per sequence (K and V as the engine keeps them, f32).
    process->start(m_inspectProgram,
        { QStringLiteral("inspect"), QStringLiteral("--model"), path, QStringLiteral("--kv-bytes"),
            QStringLiteral("4") });
}

void ModelSettingsDialog::fitContextToModel()
{
    const QJsonObject json = QJsonDocument::fromJson(m_inspectJson).object();
    m_modelContext = qint64(json[QLatin1String("context_length")].toDouble());
    if (m_modelContext <= 0)
        return;
    const int most = int(std::min<qint64>(m_modelContext, kMaximumContext));
    m_context->setMinimum(std::min(kMinimumContext, most));
    if (m_context->value() > most) {
        m_contextNote->setText(tr("This model takes at most %1 tokens: the context is set to "
                                  "that (it was %2).")
                                   .arg(QLocale().toString(most))
                                   .arg(QLocale().toString(m_context->value())));
        m_contextNote->show();
    }
    m_context->setMaximum(most); // lowers the value too
}

void ModelSettingsDialog::showPlan()
{
    if (m_state != ModelState::Read)
        return;
    cw::MemoryTarget target;
    target.gpu = m_device->currentData().toString().startsWith(QLatin1String("cuda:"));
    target.label = m_device->currentData(kTargetLabelRole).toString();
    target.memoryBytes = m_device->currentData(kMemoryRole).value<quint64>();
    target.budgetBytes = quint64(m_gpuMemory->value() * double(quint64(1) << 30));
    const auto plan = cw::planModelMemory(m_inspectJson, target, m_context->value());
    if (!plan) {
        m_summary->setText(QString::fromStdString(plan.error().message));
        return;
    }
    m_summary->setText(plan->text());
}

void ModelSettingsDialog::save()
{
    cw::ModelSettings settings;
    settings.modelPath = m_path->text().trimmed();
    if (!settings.modelPath.isEmpty()) {
        if (settings.modelPath != m_inspectedPath)
            inspect(); // typed and saved without leaving the field
        if (m_state == ModelState::Reading) {
            // Saved once the model's limits are known (a moment: inspect reads the header).
            m_saveWhenRead = true;
            m_summary->setText(tr("Reading the model before saving…"));
            return;
        }
        if (m_state == ModelState::Unreadable) {
            m_summary->setText(tr("%1\n\nThis model cannot be used: choose another, or clear "
                                  "the path to review with the fast heads only.")
                                   .arg(m_summary->text()));
            return;
        }
        if (m_modelContext > 0 && m_context->value() > m_modelContext) {
            m_contextNote->setText(
                tr("This model takes at most %1 tokens.").arg(QLocale().toString(m_modelContext)));
            m_contextNote->show();
            return;
        }
    }
    settings.device = m_device->currentData().toString();
    settings.contextLength = m_context->value();
    settings.threads = m_threads->value();
    settings.precision = m_precision->currentData().toString();
    settings.gpuMemoryGiB = m_gpuMemory->value();
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
