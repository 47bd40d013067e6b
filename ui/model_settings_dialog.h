#pragma once

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProcess;
class QSpinBox;

namespace cw::ui {

class RemoteServerBox;

// Choose the model (GGUF file or Hugging Face folder), see what it is and the memory it
// needs before loading it, and pick the device, context length and threads. The summary
// comes from `clausewright-cli inspect`, run as a separate process so a damaged file can
// never take the application down, and is shown in words (ModelMemoryPlan). The context
// cannot be set, nor saved, above the model's own maximum. Below, the remote server the
// questions may go to instead.
class ModelSettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ModelSettingsDialog(QWidget* parent = nullptr);
    ~ModelSettingsDialog() override;

    void setModelPath(const QString& path);
    // The model's own maximum context once read; 0 while unknown.
    qint64 modelContext() const { return m_modelContext; }
    QString summaryText() const;

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    enum class ModelState { Unknown, Reading, Read, Unreadable };
    void inspect();
    void showPlan();
    void fitContextToModel();
    void save();

    QLineEdit* m_path = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_contextNote = nullptr;
    QComboBox* m_device = nullptr;
    QSpinBox* m_context = nullptr;
    QSpinBox* m_threads = nullptr;
    QComboBox* m_precision = nullptr;
    QDoubleSpinBox* m_gpuMemory = nullptr;
    QProcess* m_inspect = nullptr;
    RemoteServerBox* m_remote = nullptr;
    QString m_inspectProgram; // clausewright-cli beside the application
    QString m_inspectedPath; // the path the summary is of
    QByteArray m_inspectJson; // the last model's summary, for the plan as settings change
    ModelState m_state = ModelState::Unknown;
    qint64 m_modelContext = 0;
    bool m_saveWhenRead = false; // Save was pressed while the model was being read
};

} // namespace cw::ui
