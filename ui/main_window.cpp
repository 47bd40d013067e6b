#include "ui/main_window.h"

#include "app/desktop/app_settings.h"
#include "app/desktop/contract_workflow.h"
#include "app/desktop/review_queue.h"
#include "app/desktop/sample_contract.h"
#include "app/desktop/user_folders.h"
#include "app/heads/cuad_dataset.h"
#include "app/history/history_store.h"
#include "app/redline/redline_export.h"
#include "app/review/model_run.h"
#include "ui/code_panel.h"
#include "ui/first_run_page.h"
#include "ui/folder_review_dialog.h"
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
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <qcoro/qcorofuture.h>
#include <qcoro/qcorosignal.h>

namespace cw::ui {

namespace {

// Below these widths the review's pages and table, or the code and its results, stop being
// readable: the splitter between them keeps both sides at least this wide.
constexpr int kReviewMinimumWidth = 600;
constexpr int kCodePanelMinimumWidth = 360;

// Resident memory of this process in bytes (Linux /proc; 0 where unknown).
qint64 residentBytes()
{
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.size() > 1 ? fields[1].toLongLong() * 4096 : 0;
}

} // namespace

MainWindow::MainWindow(QWidget* parent, const QString& historyPath)
    : QMainWindow(parent)
    , m_queue(new cw::ReviewQueue(this))
    , m_workflow(new cw::ContractWorkflow(
          m_queue,
          [this](QString fileName, QString prompt) { return askPdfPassword(fileName, prompt); },
          this))
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
    m_firstRun = new FirstRunPage(m_stack);
    m_firstRun->setDataFolder(cw::userFolders().data);
    m_stack->addWidget(m_dropZone);
    m_stack->addWidget(m_reviewView);
    m_stack->addWidget(m_firstRun);
    if (cw::AppSettings::firstRunChoice().isEmpty())
        m_stack->setCurrentWidget(m_firstRun);
    // Code and tests beside the contract view, hidden until asked for (View menu), in a
    // splitter whose sides keep room to be read: the panel never squeezes the review's
    // pages and table below their minimum widths (a dock took what its contents asked for).
    m_codeSplitter = new QSplitter(Qt::Horizontal, this);
    m_codeSplitter->setObjectName(QStringLiteral("codeSplitter"));
    m_codeSplitter->setChildrenCollapsible(false);
    m_reviewSide = new QWidget(m_codeSplitter);
    m_reviewSide->setMinimumWidth(kReviewMinimumWidth);
    auto* reviewLayout = new QVBoxLayout(m_reviewSide);
    reviewLayout->setContentsMargins(0, 0, 0, 0);
    reviewLayout->setSpacing(0);
    m_messageBar = new MessageBar(m_reviewSide);
    reviewLayout->addWidget(m_messageBar);
    m_stack->setParent(m_reviewSide);
    reviewLayout->addWidget(m_stack, 1);
    m_codePanel = new CodePanel(m_history->path(), m_queue->sessions(), m_codeSplitter);
    m_codePanel->setMinimumWidth(kCodePanelMinimumWidth);
    m_codeSplitter->addWidget(m_reviewSide);
    m_codeSplitter->addWidget(m_codePanel);
    m_codeSplitter->setStretchFactor(0, 1);
    m_codeSplitter->setStretchFactor(1, 0);
    m_codePanel->hide();
    setCentralWidget(m_codeSplitter);

    createActions();
    createStatusBar();

    connect(
        m_workflow, &cw::ContractWorkflow::recentFilesChanged, this, &MainWindow::updateRecentMenu);
    connect(m_workflow, &cw::ContractWorkflow::notice, this, &MainWindow::showNotice);

    connect(m_queue, &cw::ReviewQueue::started, this, [this](const QString& path) {
        m_progress->setRange(0, 0);
        m_progress->show();
        m_cancel->show();
        m_stageLabel->setText(tr("Reviewing %1…").arg(QFileInfo(path).fileName()));
        showPreview(path);
    });
    connect(m_queue, &cw::ReviewQueue::progress, this, &MainWindow::onProgress);
    connect(m_queue, &cw::ReviewQueue::modelBackend, this,
        [this](const QString& backend, const QString& passedOver) {
            m_modelLabel->setText(tr("Model: %1").arg(backend));
            m_modelLabel->setToolTip(
                passedOver.isEmpty() ? backend : tr("Passed over: %1").arg(passedOver));
            if (!passedOver.isEmpty())
                statusBar()->showMessage(
                    tr("Answering with %1 (%2)").arg(backend, passedOver), 8000);
        });
    // The fast review shows at once; the model's notes and findings stream into it.
    m_reviewView->followQueue(m_queue);
    connect(m_queue, &cw::ReviewQueue::fastReviewReady, this,
        [this] { m_stack->setCurrentWidget(m_reviewView); });
    connect(m_queue, &cw::ReviewQueue::reviewReady, this,
        [this](const cw::Review& review) { onReviewReady(review); });
    connect(m_queue, &cw::ReviewQueue::failed, this, &MainWindow::onReviewFailed);
    connect(m_queue, &cw::ReviewQueue::idle, this, [this] {
        m_progress->hide();
        m_cancel->hide();
        m_stageLabel->clear();
    });
    connect(m_queue, &cw::ReviewQueue::queueChanged, this, [this](int pending) {
        if (pending > 0)
            statusBar()->showMessage(tr("%n more contract(s) queued", nullptr, pending), 4000);
    });
    connect(m_firstRun, &FirstRunPage::startWithFastHeads, this,
        [this] { finishFirstRun(QStringLiteral("fast")); });
    connect(m_firstRun, &FirstRunPage::openSampleContract, this, [this] {
        finishFirstRun(QStringLiteral("fast"));
        const QString sample = cw::sampleContractPath();
        if (sample.isEmpty())
            showError(tr("The sample contract is not installed."));
        else
            openContract(sample);
    });
    connect(m_firstRun, &FirstRunPage::chooseModel, this, [this] {
        if (showModelSettings())
            finishFirstRun(QStringLiteral("model"));
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

    connect(m_stack, &QStackedWidget::currentChanged, this, &MainWindow::updateActions);
    connect(m_reviewView, &ReviewView::documentShown, this, &MainWindow::updateActions);
    connect(m_queue, &cw::ReviewQueue::started, this, &MainWindow::updateActions);
    connect(m_queue, &cw::ReviewQueue::idle, this, &MainWindow::updateActions);
    updateActions();

    restoreGeometry(cw::AppSettings::windowGeometry());
    restoreState(cw::AppSettings::windowState());
    m_codeSplitter->restoreState(cw::AppSettings::codeSplitterState());
    showCodePanel(cw::AppSettings::codePanelShown());
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
    m_exportAction->setObjectName(QStringLiteral("exportAction"));
    m_exportAction->setShortcut(QKeySequence(tr("Ctrl+E")));
    m_exportAction->setEnabled(false);
    auto* redline = fileMenu->addAction(tr("Export &Redline…"), this, &MainWindow::chooseRedline);
    connect(fileMenu, &QMenu::aboutToShow, redline,
        [this, redline] { redline->setEnabled(m_reviewView->hasReview()); });
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
    find->setObjectName(QStringLiteral("filterAction"));
    m_reviewActions.append(find);
    m_cancelAction
        = reviewMenu->addAction(tr("&Cancel Review"), m_queue, &cw::ReviewQueue::cancelCurrent);
    m_cancelAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_cancelAction->setObjectName(QStringLiteral("cancelReviewAction"));
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
    reviewMenu->addAction(tr("Review a &Folder…"), this, [this] {
        auto* dialog = new FolderReviewDialog(m_queue->options(), m_history->path(), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->show();
    });

    auto* viewMenu = menuBar()->addMenu(tr("&View"));
    PdfView* pdf = m_reviewView->pdfView();
    m_pageActions = {
        viewMenu->addAction(tr("Zoom &In"), pdf, &PdfView::zoomIn),
        viewMenu->addAction(tr("Zoom &Out"), pdf, &PdfView::zoomOut),
        viewMenu->addAction(tr("&Fit Width"), pdf, &PdfView::fitWidth),
        viewMenu->addAction(tr("&Next Page"), pdf, &PdfView::nextPage),
        viewMenu->addAction(tr("&Previous Page"), pdf, &PdfView::previousPage),
        viewMenu->addAction(tr("&Copy Selection"), pdf, &PdfView::copySelection),
    };
    m_pageActions[0]->setShortcut(QKeySequence::ZoomIn);
    m_pageActions[1]->setShortcut(QKeySequence::ZoomOut);
    m_pageActions[2]->setShortcut(QKeySequence(tr("Ctrl+0")));
    m_pageActions[3]->setShortcut(QKeySequence(tr("Ctrl+Down")));
    m_pageActions[4]->setShortcut(QKeySequence(tr("Ctrl+Up")));
    for (const auto& [action, name] : { std::pair { m_pageActions[0], "zoomInAction" },
             std::pair { m_pageActions[1], "zoomOutAction" },
             std::pair { m_pageActions[2], "fitWidthAction" },
             std::pair { m_pageActions[3], "nextPageAction" },
             std::pair { m_pageActions[4], "previousPageAction" },
             std::pair { m_pageActions[5], "copySelectionAction" } })
        action->setObjectName(QLatin1String(name));
    viewMenu->addSeparator();
    m_codeAction = viewMenu->addAction(tr("Code and &Tests"));
    m_codeAction->setObjectName(QStringLiteral("codePanelAction"));
    m_codeAction->setCheckable(true);
    m_codeAction->setShortcut(QKeySequence(tr("Ctrl+Shift+T")));
    connect(m_codeAction, &QAction::toggled, this, &MainWindow::showCodePanel);
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
    modelMenu->addAction(tr("Model &Settings…"), this, [this] { showModelSettings(); })
        ->setShortcut(QKeySequence::Preferences);

    auto* helpMenu = menuBar()->addMenu(tr("&Help"));
    helpMenu->addAction(
        tr("&Getting Started"), this, [this] { m_stack->setCurrentWidget(m_firstRun); });
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
    m_deviceLabel = new QLabel(this);
    m_deviceLabel->setObjectName(QStringLiteral("deviceStatus"));
    m_memoryLabel = new QLabel(this);
    m_memoryLabel->setObjectName(QStringLiteral("memoryStatus"));
    m_memoryLabel->setToolTip(tr("Memory this program uses (resident)"));
    m_speedLabel = new QLabel(this);
    m_speedLabel->setObjectName(QStringLiteral("speedStatus"));
    m_stageLabel = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setAccessibleName(tr("Review progress"));
    m_progress->setMaximumWidth(220);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setAccessibleName(tr("Cancel review"));
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, m_queue, &cw::ReviewQueue::cancelCurrent);
    auto* memoryTimer = new QTimer(this);
    connect(memoryTimer, &QTimer::timeout, this, &MainWindow::updateMemoryStatus);
    memoryTimer->start(2000);
    updateMemoryStatus();
    statusBar()->addWidget(m_modelLabel);
    statusBar()->addWidget(m_deviceLabel);
    statusBar()->addWidget(m_memoryLabel);
    statusBar()->addWidget(m_speedLabel, 1);
    statusBar()->addPermanentWidget(m_stageLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::updateModelStatus()
{
    const cw::ModelSettings model = cw::AppSettings::model();
    // The code panel takes its backends in the reviews' order.
    m_codePanel->setModel(
        model.modelPath, model.threads, model.device, model.contextLength, model.precision,
        model.gpuMemoryGiB);
    const cw::RemoteServerSettings remote = cw::AppSettings::remoteServer();
    m_codePanel->setRemote({ remote.baseUrl, {}, remote.model }, remote.order);
    using cw::generation::BackendOrder;
    if (remote.order != BackendOrder::LocalOnly && !remote.baseUrl.isEmpty()) {
        // The fallback order, as the reviews will try it.
        const QString server
            = tr("remote %1")
                  .arg(remote.model.isEmpty() ? remote.baseUrl
                                              : tr("%1 at %2").arg(remote.model, remote.baseUrl));
        const QString local
            = model.modelPath.isEmpty() ? QString() : QFileInfo(model.modelPath).fileName();
        QString text = tr("Model: %1").arg(server);
        if (remote.order == BackendOrder::RemoteThenLocal && !local.isEmpty())
            text = tr("Model: %1, else %2").arg(server, local);
        else if (remote.order == BackendOrder::LocalThenRemote && !local.isEmpty())
            text = tr("Model: %1, else %2").arg(local, server);
        m_modelLabel->setText(text);
        m_modelLabel->setToolTip(tr("Model ▸ Model Settings ▸ Remote server sets the order."));
        return;
    }
    if (model.modelPath.isEmpty()) {
        m_modelLabel->setText(tr("Fast heads only — no model loaded"));
        m_modelLabel->setToolTip(
            tr("Reviews use the built-in clause heads. Choose a model in Model ▸ Model Settings "
               "for the language model's notes."));
        m_deviceLabel->setText(tr("Device: CPU"));
        return;
    }
    m_modelLabel->setText(tr("Model: %1 · context %2")
                              .arg(QFileInfo(model.modelPath).fileName())
                              .arg(model.contextLength));
    m_modelLabel->setToolTip(model.modelPath);
    const QString device = model.device.startsWith(QLatin1String("cuda:"))
        ? tr("CUDA GPU %1").arg(model.device.mid(5))
        : tr("CPU");
    m_deviceLabel->setText(model.threads > 0
            ? tr("Device: %1 · threads: %2").arg(device).arg(model.threads)
            : tr("Device: %1").arg(device));
}

void MainWindow::updateMemoryStatus()
{
    const qint64 bytes = residentBytes();
    m_memoryLabel->setVisible(bytes > 0);
    m_memoryLabel->setText(tr("Memory: %1").arg(QLocale().formattedDataSize(bytes, 0)));
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
    m_workflow->open(path);
}

QCoro::Task<std::optional<QString>> MainWindow::askPdfPassword(QString fileName, QString prompt)
{
    QPointer<QInputDialog> dialog = new QInputDialog(this);
    dialog->setObjectName(QStringLiteral("pdfPasswordDialog"));
    dialog->setWindowTitle(tr("Password required"));
    dialog->setLabelText(prompt);
    dialog->setTextEchoMode(QLineEdit::Password);
    dialog->setAccessibleName(tr("Password for %1").arg(fileName));
    dialog->setWindowModality(Qt::WindowModal);
    dialog->open();
    auto answering = qCoro(dialog.data(), &QDialog::finished);
    const int answer = co_await answering;
    if (!dialog)
        co_return std::nullopt; // the window closed under the dialog
    const QString password = dialog->textValue();
    dialog->deleteLater();
    if (answer != QDialog::Accepted)
        co_return std::nullopt;
    co_return password;
}

void MainWindow::showPreview(const QString& path)
{
    // The pages of a PDF show while it is read and reviewed; the findings join them when the
    // review is ready. Other formats show their text with the findings.
    if (!m_workflow->beginPreview(path, m_reviewView->review()))
        return;
    cw::Review preview;
    preview.document.path = path;
    preview.document.format = cw::DocumentFormat::Pdf;
    m_reviewView->setReview(preview);
    if (!m_reviewView->documentError().isEmpty()) {
        if (auto before = m_workflow->previewFailed(path))
            m_reviewView->setReview(*before);
        return;
    }
    m_stack->setCurrentWidget(m_reviewView);
    m_exportAction->setEnabled(false);
    setWindowTitle(tr("%1 — Clausewright").arg(QFileInfo(path).fileName()));
}

void MainWindow::onReviewFailed(const QString& path, const QString& message)
{
    if (auto before = m_workflow->previewFailed(path)) {
        // Back to what was shown before, so a failed review leaves no half-open document.
        m_reviewView->setReview(*before);
        const bool had = m_reviewView->hasReview();
        m_stack->setCurrentWidget(had                         ? static_cast<QWidget*>(m_reviewView)
                : cw::AppSettings::firstRunChoice().isEmpty() ? static_cast<QWidget*>(m_firstRun)
                                                              : m_dropZone);
        m_exportAction->setEnabled(had);
        showTitleFor(m_reviewView->review());
    }
    if (message == QLatin1String("cancelled") || message.endsWith(QLatin1String("cancelled")))
        showNotice(tr("Review of %1 cancelled.").arg(QFileInfo(path).fileName()));
    else
        showError(message);
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
    m_workflow->previewDone();
    m_reviewView->setReview(review);
    {
        qint64 total = 0;
        for (auto it = review.timingsMs.cbegin(); it != review.timingsMs.cend(); ++it)
            total += it.value();
        const int pages = review.document.pageCount();
        // No %n plural: the English UI has no translation file to turn "page(s)" into words.
        const QString seconds = QLocale().toString(total / 1000.0, 'f', 1);
        QString speed = pages == 1 ? tr("Last review: 1 page in %1 s").arg(seconds)
            : pages > 1            ? tr("Last review: %1 pages in %2 s").arg(pages).arg(seconds)
                                   : tr("Last review: %1 s").arg(seconds);
        // Where the model review ran, its tokens/s and time (as the report's footer says).
        if (const auto run = cw::modelRunOf(review))
            speed += tr(" · model review on %1").arg(cw::modelRunText(*run));
        m_speedLabel->setText(speed);
    }
    m_stack->setCurrentWidget(m_reviewView);
    m_exportAction->setEnabled(true);
    showTitleFor(review);
    m_messageBar->hide();
    QStringList notices = review.document.warnings;
    if (!m_reviewView->documentError().isEmpty())
        notices.prepend(m_reviewView->documentError());
    if (!notices.isEmpty())
        m_messageBar->showMessage(notices.join(QLatin1Char('\n')), MessageBar::Kind::Info);
    // Tasks are named before co_await: GCC 12 destroys temporaries of a co_await
    // full-expression twice.
    QPointer<MainWindow> self(this);
    auto saving = m_history->save(review);
    auto saved = co_await saving;
    if (!self)
        co_return; // the window closed while the history saved
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
    QPointer<MainWindow> self(this);
    auto editing = m_history->editFinding(id, index, edit);
    auto result = co_await editing;
    if (!self)
        co_return;
    if (!result)
        showError(tr("Your correction could not be saved: %1")
                      .arg(QString::fromStdString(result.error().message)));
    else
        statusBar()->showMessage(tr("Correction saved."), 3000);
}

QCoro::Task<bool> MainWindow::exportCurrent(QString path, QString formatName)
{
    const auto format = cw::reportFormatFromName(formatName);
    if (!format || !m_reviewView->hasReview())
        co_return false;
    // Rendering (the PDF's text layout included) and writing run on a worker: a long review
    // or a slow disk never freezes the window. The review is copied to the worker.
    m_exportAction->setEnabled(false);
    statusBar()->showMessage(tr("Writing the report…"));
    QPointer<MainWindow> self(this);
    auto exporting = cw::ContractWorkflow::exportReport(m_reviewView->review(), *format, path);
    const cw::Result<void> result = co_await exporting;
    if (!self)
        co_return false;
    m_exportAction->setEnabled(m_reviewView->hasReview());
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
    // The task runs on after this returns (it shows its own result and errors): it holds
    // copies of the path and the format, never references to these locals.
    if (const auto format = cw::ContractWorkflow::formatFor(path, selectedFilter))
        exportCurrent(path, cw::reportFormatName(*format));
}

void MainWindow::chooseRedline()
{
    if (!m_reviewView->hasReview())
        return;
    const cw::Review review = m_reviewView->review();
    const QString path = QFileDialog::getSaveFileName(this, tr("Export redline"),
        QFileInfo(review.document.path).completeBaseName() + QStringLiteral("-redline.docx"),
        tr("Word document with tracked changes (*.docx)"));
    if (path.isEmpty())
        return;
    statusBar()->showMessage(tr("Writing the redline…"));
    QPointer<MainWindow> self(this);
    // Reading and rewriting the contract runs on a worker: the window never waits on disk.
    [](QPointer<MainWindow> self, QString path,
        QFuture<cw::Result<cw::RedlineSummary>> writing) -> QCoro::Task<> {
        const cw::Result<cw::RedlineSummary> done = co_await writing;
        if (!self)
            co_return;
        if (!done) {
            self->showError(QString::fromStdString(done.error().message));
            co_return;
        }
        self->statusBar()->showMessage(tr("Redline with %1 tracked changes and %2 comments "
                                          "written to %3")
                                           .arg(done->changes)
                                           .arg(done->comments)
                                           .arg(path),
            8000);
    }(self, path, QtConcurrent::run([review, path] {
        return cw::exportRedlineWithItsPlaybook(review, path);
    }));
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
    QPointer<MainWindow> self(this);
    auto loading = m_history->load(reviewId);
    auto loaded = co_await loading;
    if (!self)
        co_return false;
    if (!loaded) {
        showError(QString::fromStdString(loaded.error().message));
        co_return false;
    }
    m_reviewView->setReview(loaded.value());
    m_stack->setCurrentWidget(m_reviewView);
    m_exportAction->setEnabled(true);
    showTitleFor(m_reviewView->review());
    emit reviewShown(reviewId);
    co_return true;
}

bool MainWindow::showModelSettings(const QString& modelPath)
{
    ModelSettingsDialog dialog(this);
    if (!modelPath.isEmpty())
        dialog.setModelPath(modelPath);
    if (dialog.exec() != QDialog::Accepted)
        return false;
    updateModelStatus();
    return true;
}

void MainWindow::finishFirstRun(const QString& choice)
{
    cw::AppSettings::setFirstRunChoice(choice);
    if (m_stack->currentWidget() == m_firstRun)
        m_stack->setCurrentWidget(
            m_reviewView->hasReview() ? static_cast<QWidget*>(m_reviewView) : m_dropZone);
}

void MainWindow::openFile(const QString& path)
{
    if (QFileInfo(path).suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) == 0) {
        // A model opened with the application (application/x-gguf): offer it in Model Settings,
        // which reads it in a separate process. Queued: this may run before the window shows.
        QTimer::singleShot(0, this, [this, path] { showModelSettings(path); });
        return;
    }
    openContract(path);
}

void MainWindow::setLanguage(const QString& language)
{
    cw::AppSettings::setLanguage(language);
    statusBar()->showMessage(installUiLanguage(language)
            ? tr("Language changed: menus update when Clausewright restarts.")
            : tr("That language is not available."),
        5000);
}

void MainWindow::showTitleFor(const cw::Review& review)
{
    if (review.document.path.isEmpty()) {
        setWindowTitle(tr("Clausewright"));
        return;
    }
    setWindowTitle(
        tr("%1 — Clausewright")
            .arg(review.document.title.isEmpty() ? QFileInfo(review.document.path).fileName()
                                                 : review.document.title));
}

void MainWindow::showCodePanel(bool shown)
{
    if (shown == m_codePanel->isVisibleTo(this)) {
        m_codeAction->setChecked(shown);
        return;
    }
    m_codePanel->setVisible(shown);
    m_codeAction->setChecked(shown);
    m_reviewView->setDocumentFirst(shown);
    if (!shown)
        return;
    // First shown, or the saved sizes no longer fit the window: 30 % for the code, within
    // both sides' minimum widths (a third left the pages under 480 px at 1280).
    const QList<int> sizes = m_codeSplitter->sizes();
    const int total = std::max(m_codeSplitter->width(), width());
    if (sizes.size() == 2 && sizes[1] >= kCodePanelMinimumWidth && sizes[0] >= kReviewMinimumWidth)
        return;
    const int code = std::max(kCodePanelMinimumWidth, total * 3 / 10);
    m_codeSplitter->setSizes({ std::max(kReviewMinimumWidth, total - code), code });
}

void MainWindow::updateActions()
{
    const bool reviewShown = m_stack->currentWidget() == m_reviewView && m_reviewView->hasReview();
    for (QAction* action : std::as_const(m_reviewActions))
        action->setEnabled(reviewShown);
    const bool pagesShown = reviewShown && m_reviewView->pdfView()->renderer() != nullptr
        && m_reviewView->pdfView()->isVisibleTo(m_reviewView);
    for (QAction* action : std::as_const(m_pageActions))
        action->setEnabled(pagesShown);
    m_cancelAction->setEnabled(m_queue->isBusy());
}

void MainWindow::showNotice(const QString& message)
{
    m_messageBar->showMessage(message, MessageBar::Kind::Info);
    emit noticeShown(message);
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
            openFile(url.toLocalFile());
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    cw::AppSettings::setWindowGeometry(saveGeometry(), saveState());
    cw::AppSettings::setCodePanel(m_codePanel->isVisibleTo(this), m_codeSplitter->saveState());
    QMainWindow::closeEvent(event);
}

} // namespace cw::ui
