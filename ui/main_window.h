#pragma once

#include "app/review/review_pipeline.h"

#include <QMainWindow>
#include <memory>
#include <optional>
#include <qcoro/qcorotask.h>

class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QSplitter;
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
    // Coroutines take their arguments by value: a caller (a menu's slot) returns at the first
    // co_await and drops the task, so a reference would dangle when the task resumes.
    QCoro::Task<bool> exportCurrent(QString path, QString format); // for tests too
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
    void showCodePanel(bool shown);
    // Actions that act on an open review are enabled only while one is shown (not on the
    // drop zone or the Getting Started page); Cancel only while a review runs.
    void updateActions();
    void showTitleFor(const cw::Review& review);

    QStackedWidget* m_stack = nullptr;
    MessageBar* m_messageBar = nullptr;
    QLabel* m_dropZone = nullptr;
    FirstRunPage* m_firstRun = nullptr;
    ReviewView* m_reviewView = nullptr;
    CodePanel* m_codePanel = nullptr; // beside the review (View ▸ Code and Tests)
    QSplitter* m_codeSplitter = nullptr; // the review (with its message bar) | the code panel
    QWidget* m_reviewSide = nullptr;
    QAction* m_codeAction = nullptr;
    QList<QAction*> m_reviewActions; // filter and zoom: need a review on screen
    QList<QAction*> m_pageActions; // zoom, pages, copy: need a PDF's pages on screen
    QAction* m_cancelAction = nullptr;
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
