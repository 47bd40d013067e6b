#include "ui/main_window.h"

#include "app/desktop/app_settings.h"
#include "app/desktop/review_queue.h"
#include "app/heads/cuad_dataset.h"
#include "app/history/history_store.h"
#include "app/report/report_exporter.h"
#include "ui/history_dialog.h"
#include "ui/message_bar.h"
#include "ui/model_settings_dialog.h"
#include "ui/pdf_view.h"
#include "ui/review_view.h"
#include "ui/ui_language.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QStatusBar>
#include <QUrl>
#include <QVBoxLayout>

namespace cw::ui {

MainWindow::MainWindow(QWidget* parent, const QString& historyPath)
    : QMainWindow(parent)
    , m_queue(new cw::ReviewQueue(this))
    , m_history(std::make_unique<cw::HistoryStore>(
          historyPath.isEmpty() ? cw::HistoryDatabase::defaultPath() : historyPath))
{
    setWindowTitle(tr("Clausewright"));
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);
    resize(1280, 800);

    m_stack = new QStackedWidget(this);
    m_dropZone
        = new QLabel(tr("Drop a contract here (PDF, DOCX or TXT)\nor choose File ▸ Open"), m_stack);
    m_dropZone->setObjectName(QStringLiteral("dropZone"));
    m_dropZone->setAccessibleName(tr("Contract drop zone"));
    m_dropZone->setAlignment(Qt::AlignCenter);
    m_dropZone->setStyleSheet(QStringLiteral(
        "QLabel#dropZone { border: 2px dashed palette(mid); border-radius: 12px; margin: 48px;"
        " font-size: 18px; color: palette(text); }"));
    m_reviewView = new ReviewView(m_stack);
    m_reviewView->setCategories(cw::heads::cuadCategories());
    m_stack->addWidget(m_dropZone);
    m_stack->addWidget(m_reviewView);
    auto* central = new QWidget(this);
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    m_messageBar = new MessageBar(central);
    centralLayout->addWidget(m_messageBar);
    centralLayout->addWidget(m_stack, 1);
    setCentralWidget(central);

    createActions();
    createStatusBar();

    connect(m_queue, &cw::ReviewQueue::started, this, [this](const QString& path) {
        m_progress->setRange(0, 0);
        m_progress->show();
        m_cancel->show();
        m_stageLabel->setText(tr("Reviewing %1…").arg(QFileInfo(path).fileName()));
    });
    connect(m_queue, &cw::ReviewQueue::progress, this, &MainWindow::onProgress);
    connect(m_queue, &cw::ReviewQueue::reviewReady, this,
        [this](const cw::Review& review) { onReviewReady(review); });
    connect(m_queue, &cw::ReviewQueue::failed, this,
        [this](const QString&, const QString& message) { showError(message); });
    connect(m_queue, &cw::ReviewQueue::idle, this, [this] {
        m_progress->hide();
        m_cancel->hide();
        m_stageLabel->clear();
    });
    connect(m_queue, &cw::ReviewQueue::queueChanged, this, [this](int pending) {
        if (pending > 0)
            statusBar()->showMessage(tr("%n more contract(s) queued", nullptr, pending), 4000);
    });
    connect(m_reviewView, &ReviewView::findingEdited, this,
        [this](int index, const QString& category, cw::Risk risk, const QString& comment) {
            onFindingEdited(index, category, risk, comment);
        });

    cw::ReviewOptions options;
    options.playbookPath = cw::AppSettings::playbookPath();
    m_queue->setOptions(options);
    updateModelStatus();
    m_history->open(); // queued on the store's worker; later calls wait for it

    restoreGeometry(cw::AppSettings::windowGeometry());
    restoreState(cw::AppSettings::windowState());
}

MainWindow::~MainWindow()
{
    m_queue->cancelAll();
}

void MainWindow::createActions()
{
    auto* fileMenu = menuBar()->addMenu(tr("&File"));
    auto* open = fileMenu->addAction(tr("&Open Contract…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open contract"), QString(),
            tr("Contracts (*.pdf *.docx *.txt);;All files (*)"));
        if (!path.isEmpty())
            openContract(path);
    });
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = fileMenu->addMenu(tr("Open &Recent"));
    updateRecentMenu();
    m_exportAction = fileMenu->addAction(tr("&Export Report…"), this, &MainWindow::chooseExport);
    m_exportAction->setShortcut(QKeySequence(tr("Ctrl+E")));
    m_exportAction->setEnabled(false);
    auto* history = fileMenu->addAction(tr("&History…"), this, &MainWindow::showHistory);
    history->setShortcut(QKeySequence(tr("Ctrl+H")));
    fileMenu->addSeparator();
    auto* quit = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* reviewMenu = menuBar()->addMenu(tr("&Review"));
    auto* find = reviewMenu->addAction(tr("&Filter Clauses"), this, [this] {
        m_reviewView->filterEdit()->setFocus();
        m_reviewView->filterEdit()->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    auto* cancel
        = reviewMenu->addAction(tr("&Cancel Review"), m_queue, &cw::ReviewQueue::cancelCurrent);
    cancel->setShortcut(QKeySequence(Qt::Key_Escape));
    auto* playbook = reviewMenu->addAction(tr("Choose &Playbook…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Choose playbook"), QString(), tr("Playbooks (*.yaml *.yml *.json)"));
        if (path.isEmpty())
            return;
        cw::AppSettings::setPlaybookPath(path);
        cw::ReviewOptions options = m_queue->options();
        options.playbookPath = path;
        m_queue->setOptions(options);
    });
    Q_UNUSED(playbook);

    auto* viewMenu = menuBar()->addMenu(tr("&View"));
    PdfView* pdf = m_reviewView->pdfView();
    viewMenu->addAction(tr("Zoom &In"), pdf, &PdfView::zoomIn)->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction(tr("Zoom &Out"), pdf, &PdfView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);
    viewMenu->addAction(tr("&Fit Width"), pdf, &PdfView::fitWidth)
        ->setShortcut(QKeySequence(tr("Ctrl+0")));
    viewMenu->addAction(tr("&Next Page"), pdf, &PdfView::nextPage)
        ->setShortcut(QKeySequence(tr("Ctrl+Down")));
    viewMenu->addAction(tr("&Previous Page"), pdf, &PdfView::previousPage)
        ->setShortcut(QKeySequence(tr("Ctrl+Up")));
    viewMenu->addAction(tr("&Copy Selection"), pdf, &PdfView::copySelection);
    viewMenu->addSeparator();
    auto* languageMenu = viewMenu->addMenu(tr("&Language"));
    auto* languages = new QActionGroup(this);
    const QString current = cw::AppSettings::language();
    for (const auto& [code, name] : { std::pair { QString(), tr("Follow the system") },
             std::pair { QStringLiteral("en"), QStringLiteral("English") },
             std::pair { QStringLiteral("zh_CN"), QStringLiteral("简体中文") } }) {
        auto* action = languageMenu->addAction(name, this, [this, code] { setLanguage(code); });
        action->setCheckable(true);
        action->setChecked(code == current);
        languages->addAction(action);
    }

    auto* modelMenu = menuBar()->addMenu(tr("&Model"));
    modelMenu->addAction(tr("Model &Settings…"), this, &MainWindow::showModelSettings)
        ->setShortcut(QKeySequence::Preferences);

    auto* helpMenu = menuBar()->addMenu(tr("&Help"));
    helpMenu->addAction(tr("&About Clausewright"), this, [this] {
        QMessageBox::about(this, tr("About Clausewright"),
            tr("<h3>Clausewright %1</h3><p>Contract review with a language model that runs on "
               "this computer. Nothing leaves the machine.</p>"
               "<p>Sample and test contracts: CUAD v1, The Atticus Project, CC BY 4.0.</p>")
                .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::createStatusBar()
{
    m_modelLabel = new QLabel(this);
    m_modelLabel->setObjectName(QStringLiteral("modelStatus"));
    m_stageLabel = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setAccessibleName(tr("Review progress"));
    m_progress->setMaximumWidth(220);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setAccessibleName(tr("Cancel review"));
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, m_queue, &cw::ReviewQueue::cancelCurrent);
    statusBar()->addWidget(m_modelLabel, 1);
    statusBar()->addPermanentWidget(m_stageLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::updateModelStatus()
{
    const cw::ModelSettings model = cw::AppSettings::model();
    if (model.modelPath.isEmpty()) {
        m_modelLabel->setText(tr("No model loaded: reviews use the fast heads."));
        return;
    }
    m_modelLabel->setText(tr("Model: %1 · device %2 · context %3")
                              .arg(QFileInfo(model.modelPath).fileName(), model.device)
                              .arg(model.contextLength));
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = cw::AppSettings::recentFiles();
    for (const QString& file : files)
        m_recentMenu
            ->addAction(QFileInfo(file).fileName(), this, [this, file] { openContract(file); })
            ->setToolTip(file);
    m_recentMenu->setEnabled(!files.isEmpty());
}

void MainWindow::openContract(const QString& path)
{
    cw::AppSettings::addRecentFile(path);
    updateRecentMenu();
    m_queue->enqueue(path);
}

void MainWindow::onProgress(cw::ReviewStage stage, int done, int total)
{
    static const QHash<cw::ReviewStage, const char*> names {
        { cw::ReviewStage::Reading, QT_TR_NOOP("Reading") },
        { cw::ReviewStage::Segmenting, QT_TR_NOOP("Segmenting") },
        { cw::ReviewStage::Heads, QT_TR_NOOP("Finding clauses") },
        { cw::ReviewStage::ModelReview, QT_TR_NOOP("Model review") },
        { cw::ReviewStage::Playbook, QT_TR_NOOP("Checking the playbook") },
        { cw::ReviewStage::Done, QT_TR_NOOP("Done") },
    };
    const QString name = tr(names.value(stage, ""));
    m_stageLabel->setText(total > 0 ? tr("%1 %2/%3").arg(name).arg(done).arg(total) : name);
    if (total > 0) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    } else {
        m_progress->setRange(0, 0);
    }
}

QCoro::Task<> MainWindow::onReviewReady(cw::Review review)
{
    m_reviewView->setReview(review);
    m_stack->setCurrentWidget(m_reviewView);
    m_exportAction->setEnabled(true);
    setWindowTitle(
        tr("%1 — Clausewright")
            .arg(review.document.title.isEmpty() ? QFileInfo(review.document.path).fileName()
                                                 : review.document.title));
    m_messageBar->hide();
    QStringList notices = review.document.warnings;
    if (!m_reviewView->documentError().isEmpty())
        notices.prepend(m_reviewView->documentError());
    if (!notices.isEmpty())
        m_messageBar->showMessage(notices.join(QLatin1Char('\n')), MessageBar::Kind::Info);
    // Tasks are named before co_await: GCC 12 destroys temporaries of a co_await
    // full-expression twice.
    auto saving = m_history->save(review);
    auto saved = co_await saving;
    if (!saved) {
        showError(tr("The review is shown but could not be saved to the history: %1")
                      .arg(QString::fromStdString(saved.error().message)));
        co_return;
    }
    cw::Review withId = m_reviewView->review();
    withId.id = saved.value();
    m_reviewView->setReview(withId);
    emit reviewShown(withId.id);
}

QCoro::Task<> MainWindow::onFindingEdited(
    int index, QString category, cw::Risk risk, QString comment)
{
    m_reviewView->applyEdit(index, category, risk, comment);
    const qint64 id = m_reviewView->review().id;
    if (id == 0)
        co_return;
    cw::FindingEdit edit;
    edit.category = category;
    edit.risk = risk;
    edit.comment = comment;
    auto editing = m_history->editFinding(id, index, edit);
    auto result = co_await editing;
    if (!result)
        showError(tr("Your correction could not be saved: %1")
                      .arg(QString::fromStdString(result.error().message)));
    else
        statusBar()->showMessage(tr("Correction saved."), 3000);
}

QCoro::Task<bool> MainWindow::exportCurrent(const QString& path, const QString& formatName)
{
    const auto format = cw::reportFormatFromName(formatName);
    if (!format || !m_reviewView->hasReview())
        co_return false;
    const cw::Review review = m_reviewView->review();
    auto result = cw::exportReview(review, *format, path);
    if (!result) {
        showError(QString::fromStdString(result.error().message));
        co_return false;
    }
    statusBar()->showMessage(tr("Report written to %1").arg(path), 5000);
    co_return true;
}

void MainWindow::chooseExport()
{
    if (!m_reviewView->hasReview())
        return;
    QString selectedFilter;
    const QString base = QFileInfo(m_reviewView->review().document.path).completeBaseName()
        + QStringLiteral("-review");
    const QString path
        = QFileDialog::getSaveFileName(this, tr("Export report"), base + QStringLiteral(".pdf"),
            tr("PDF report (*.pdf);;HTML report (*.html);;Markdown (*.md);;JSON (*.json);;CSV of "
               "findings (*.csv)"),
            &selectedFilter);
    if (path.isEmpty())
        return;
    QString suffix = QFileInfo(path).suffix().toLower();
    if (!cw::reportFormatFromName(suffix)) {
        // The user typed no suffix: take the format from the chosen filter.
        suffix = selectedFilter.section(QStringLiteral("*."), 1).section(QLatin1Char(')'), 0, 0);
    }
    exportCurrent(path, suffix);
}

void MainWindow::showHistory()
{
    if (!m_historyDialog) {
        m_historyDialog = new HistoryDialog(m_history.get(), this);
        connect(m_historyDialog, &HistoryDialog::openRequested, this,
            [this](qint64 id) { openFromHistory(id); });
    }
    m_historyDialog->refresh();
    m_historyDialog->show();
    m_historyDialog->raise();
}

QCoro::Task<bool> MainWindow::openFromHistory(qint64 reviewId)
{
    auto loading = m_history->load(reviewId);
    auto loaded = co_await loading;
    if (!loaded) {
        showError(QString::fromStdString(loaded.error().message));
        co_return false;
    }
    m_reviewView->setReview(loaded.value());
    m_stack->setCurrentWidget(m_reviewView);
    m_exportAction->setEnabled(true);
    emit reviewShown(reviewId);
    co_return true;
}

void MainWindow::showModelSettings()
{
    ModelSettingsDialog dialog(this);
    if (dialog.exec() == QDialog::Accepted)
        updateModelStatus();
}

void MainWindow::setLanguage(const QString& language)
{
    cw::AppSettings::setLanguage(language);
    statusBar()->showMessage(installUiLanguage(language)
            ? tr("Language changed: menus update when Clausewright restarts.")
            : tr("That language is not available."),
        5000);
}

void MainWindow::showError(const QString& message)
{
    m_lastError = message;
    m_messageBar->showMessage(message, MessageBar::Kind::Error);
    emit errorShown(message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile())
            openContract(url.toLocalFile());
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    cw::AppSettings::setWindowGeometry(saveGeometry(), saveState());
    QMainWindow::closeEvent(event);
}

} // namespace cw::ui
