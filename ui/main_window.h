#pragma once

#include "app/review/review_pipeline.h"

#include <QMainWindow>
#include <memory>
#include <optional>
#include <qcoro/qcorotask.h>

class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QStackedWidget;

namespace cw {
class ContractWorkflow;
class HistoryStore;
class ReviewQueue;
} // namespace cw

namespace cw::ui {

class CodePanel;
class FirstRunPage;
class HistoryDialog;
class MessageBar;
class ReviewView;

// The application's main window: a drop zone until a contract is open, then the review
// view. Reviews run on worker threads through ReviewQueue; results are saved to the history.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // historyPath: the SQLite file (tests pass a temporary one); empty: the default.
    explicit MainWindow(QWidget* parent = nullptr, const QString& historyPath = {});
    ~MainWindow() override;

    // Queues a contract for review; an encrypted PDF first asks for its password (a
    // window-modal dialog named "pdfPasswordDialog"), and a PDF's first page shows while it
    // is being read.
    void openContract(const QString& path);
    // A file opened with the application or dropped on it: a GGUF model opens Model Settings
    // with it filled in, anything else is reviewed as a contract.
    void openFile(const QString& path);
    ReviewView* reviewView() const { return m_reviewView; }
    CodePanel* codePanel() const { return m_codePanel; }
    HistoryStore* history() const { return m_history.get(); }
    ReviewQueue* queue() const { return m_queue; }
    QString lastError() const { return m_lastError; }
    QCoro::Task<bool> exportCurrent(const QString& path, const QString& format); // for tests too
    QCoro::Task<bool> openFromHistory(qint64 reviewId);

signals:
    void reviewShown(qint64 reviewId);
    void errorShown(const QString& message);
    void noticeShown(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createStatusBar();
    void updateModelStatus();
    void updateMemoryStatus();
    QCoro::Task<std::optional<QString>> askPdfPassword(QString fileName, QString prompt);
    void showPreview(const QString& path);
    void onReviewFailed(const QString& path, const QString& message);
    void showNotice(const QString& message);
    void updateRecentMenu();
    void showError(const QString& message);
    void onProgress(cw::ReviewStage stage, int done, int total);
    QCoro::Task<> onReviewReady(cw::Review review);
    QCoro::Task<> onFindingEdited(int index, QString category, cw::Risk risk, QString comment);
    void chooseExport();
    void chooseRedline(); // "Export Redline…": the playbook's wording as tracked changes
    void showHistory();
    bool showModelSettings(const QString& modelPath = {}); // true: saved
    void finishFirstRun(const QString& choice);
    void setLanguage(const QString& language);

    QStackedWidget* m_stack = nullptr;
    MessageBar* m_messageBar = nullptr;
    QLabel* m_dropZone = nullptr;
    FirstRunPage* m_firstRun = nullptr;
    ReviewView* m_reviewView = nullptr;
    CodePanel* m_codePanel = nullptr; // in a dock beside the review (View ▸ Code and Tests)
    QDockWidget* m_codeDock = nullptr;
    cw::ReviewQueue* m_queue = nullptr;
    cw::ContractWorkflow* m_workflow = nullptr; // open, password, preview and export steps
    std::unique_ptr<cw::HistoryStore> m_history;
    HistoryDialog* m_historyDialog = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_exportAction = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_deviceLabel = nullptr;
    QLabel* m_memoryLabel = nullptr;
    QLabel* m_speedLabel = nullptr;
    QLabel* m_stageLabel = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QString m_lastError;
};

} // namespace cw::ui
