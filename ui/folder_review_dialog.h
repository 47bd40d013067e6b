#pragma once

#include "app/folder_review/folder_review.h"

#include <QDialog>
#include <atomic>
#include <memory>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

// "Review a Folder…": choose a folder and a table file, watch the progress and the time left,
// cancel. The work is app/folder_review's reviewFolder on a worker thread; the dialog only
// shows it. Every contract is saved to the history at `historyPath`.
class FolderReviewDialog : public QDialog {
    Q_OBJECT
public:
    FolderReviewDialog(cw::ReviewOptions options, QString historyPath, QWidget* parent = nullptr);
    ~FolderReviewDialog() override;

protected:
    void reject() override; // Esc or Close: cancels a running review first

private:
    void start();
    void showProgress(const cw::FolderReviewProgress& progress);

    cw::ReviewOptions m_options;
    QString m_historyPath;
    QLineEdit* m_folder = nullptr;
    QLineEdit* m_table = nullptr;
    QProgressBar* m_bar = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_start = nullptr;
    std::shared_ptr<std::atomic_bool> m_cancel;
    bool m_running = false;
};
