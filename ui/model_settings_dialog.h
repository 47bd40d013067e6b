#pragma once

#include <QDialog>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QProcess;
class QSpinBox;

namespace cw::ui {

class RemoteServerBox;

// Choose the model (GGUF file or Hugging Face folder), see what it is and the memory it
// needs before loading it, and pick the device, context length and threads. The summary
// comes from `clausewright-cli inspect`, run as a separate process so a damaged file can
// never take the application down. Below, the remote server the questions may go to instead.
class ModelSettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ModelSettingsDialog(QWidget* parent = nullptr);
    ~ModelSettingsDialog() override;

    void setModelPath(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void inspect();
    void save();

    QLineEdit* m_path = nullptr;
    QPlainTextEdit* m_summary = nullptr;
    QComboBox* m_device = nullptr;
    QSpinBox* m_context = nullptr;
    QSpinBox* m_threads = nullptr;
    QProcess* m_inspect = nullptr;
    RemoteServerBox* m_remote = nullptr;
};

} // namespace cw::ui
