#pragma once

#include "app/generation/backend_order.h"
#include "app/generation/remote_server.h"
#include "app/test_generation/test_generation.h"
#include "ui/code_editor.h"

#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTreeWidget;

namespace cw {
class CodeTestController;
namespace llm {
class LlmSessionCache;
}
} // namespace cw

namespace cw::ui {

class CodeHighlighter;

// The side panel for code: paste or drop a file, pick a skill, Generate (the answer streams
// into the tests editor; test skills then show only the kept tests, every round's verdicts
// and the coverage), edit the tests and Run them again in the sandbox, Save them beside the
// source. Generations are saved in the history and can be searched and reopened. Without a
// model it says one is needed and still runs tests.
class CodePanel : public QWidget {
    Q_OBJECT
public:
    // sessions: the loaded models shared with the reviews (null: the panel's own).
    explicit CodePanel(const QString& historyPath,
        std::shared_ptr<llm::LlmSessionCache> sessions = {}, QWidget* parent = nullptr);
    ~CodePanel() override;

    // The model generations use (empty: none), with its Model Settings.
    void setModel(const QString& path, int threads, const QString& device, qint64 contextLength,
        const QString& precision, double gpuMemoryGiB = 0.0);
    // The remote server and the backend order (Model Settings ▸ Remote server).
    void setRemote(const generation::RemoteServer& server, generation::BackendOrder order);
    // Loads a file into the code editor; refuses binary, over 1 MB and unreadable files.
    bool openCode(const QString& path);
    void setCode(const QString& code, const QString& fileName = {});
    QString language() const;
    void setLanguage(const QString& language);
    bool selectSkill(const QString& name);
    // Writes the tests editor's text to `path` (atomically); errors name the file.
    Result<void> saveTestsTo(const QString& path);
    // Beside the source, with the runner's test file name ("test_pricing.py").
    QString defaultTestsPath() const;

    CodeTestController* controller() const { return m_controller; }
    CodeEditor* codeEditor() const { return m_code; }
    CodeEditor* testsEditor() const { return m_tests; }
    QTreeWidget* results() const { return m_results; }
    QLabel* coverageLabel() const { return m_coverage; }
    QLabel* statusLabel() const { return m_status; }

public slots:
    void generate();
    void runTests();
    void cancel();
    void saveTests();
    void showHistory();

signals:
    void generationShown(const cw::TestGenerationReport& report);
    void testsShown(const cw::TestRunResult& result);
    void failed(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateModelNotice(); // shown while no backend of the order is set
    void refillSkills();
    void setBusy(bool busy);
    void showReport(const TestGenerationReport& report);
    void showRun(const TestRunResult& run);
    void addRound(const TestGenerationRound& round);
    void detectLanguage();
    QString codeFileName() const;

    CodeTestController* m_controller = nullptr;
    CodeEditor* m_code = nullptr;
    CodeEditor* m_tests = nullptr;
    CodeHighlighter* m_codeColours = nullptr;
    CodeHighlighter* m_testColours = nullptr;
    QComboBox* m_language = nullptr;
    QComboBox* m_skill = nullptr;
    QSpinBox* m_rounds = nullptr;
    QPushButton* m_generate = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_save = nullptr;
    QTreeWidget* m_results = nullptr;
    QLabel* m_coverage = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_modelNotice = nullptr;
    QString m_codePath; // the file the code came from; empty: pasted
    QString m_testFileName; // the runner's name for the tests of this code
    bool m_languageChosen = false; // the user picked it: no more detection
    bool m_streaming = false;
};

} // namespace cw::ui
