#include "ui/code_panel.h"

#include "app/desktop/code_test_controller.h"
#include "app/test_generation/test_file_parts.h"
#include "app/test_runner/code_language.h"
#include "app/test_runner/test_workspace.h"
#include "ui/code_editor.h"
#include "ui/code_highlighter.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace cw::ui {

namespace {

const QList<QPair<QString, QString>> kLanguages = { { "python", "Python" }, { "cpp", "C++" },
    { "javascript", "JavaScript" }, { "typescript", "TypeScript" }, { "go", "Go" },
    { "text", "Text (specification, clause)" } };

QColor passColour()
{
    return QColor(0x1b, 0x87, 0x3f);
}
QColor failColour()
{
    return QColor(0xc6, 0x28, 0x28);
}
QColor greyColour()
{
    return QColor(0x80, 0x80, 0x80);
}

CodeEditor* makeEditor(QWidget* parent, const QString& name, const QString& placeholder)
{
    auto* editor = new CodeEditor(parent);
    editor->setObjectName(name);
    editor->setPlaceholderText(placeholder);
    return editor;
}

QTreeWidgetItem* resultItem(QTreeWidgetItem* parent, const QString& name, const QString& result,
    const QString& detail, const QColor& colour)
{
    // One line in the cell (the failure's first line); all of it in the tooltip.
    const QString first = detail.trimmed().section('\n', 0, 0).left(200);
    auto* item = new QTreeWidgetItem(parent, { name, result, first });
    item->setForeground(1, colour);
    item->setToolTip(2, detail.left(4000));
    return item;
}

} // namespace

CodePanel::CodePanel(
    const QString& historyPath, std::shared_ptr<llm::LlmSessionCache> sessions, QWidget* parent)
    : QWidget(parent)
    , m_controller(new CodeTestController(historyPath, std::move(sessions), this))
{
    setObjectName(QStringLiteral("codePanel"));
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto* pickers = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open…"), this);
    open->setToolTip(tr("Open a source file (or drop one on the panel)"));
    connect(open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open code"), QString(),
            tr("Code (*.py *.cpp *.cc *.h *.hpp *.js *.mjs *.ts *.go *.txt);;All files (*)"));
        if (!path.isEmpty())
            openCode(path);
    });
    m_language = new QComboBox(this);
    m_language->setObjectName(QStringLiteral("languagePicker"));
    for (const auto& [id, title] : kLanguages)
        m_language->addItem(title, id);
    m_skill = new QComboBox(this);
    m_skill->setObjectName(QStringLiteral("skillPicker"));
    m_skill->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_rounds = new QSpinBox(this);
    m_rounds->setRange(1, 10);
    m_rounds->setValue(3);
    m_rounds->setPrefix(tr("rounds: "));
    m_rounds->setToolTip(tr("Answers asked for at most: the first and the repairs"));
    pickers->addWidget(open);
    pickers->addWidget(m_language);
    pickers->addWidget(m_skill, 1);
    pickers->addWidget(m_rounds);
    layout->addLayout(pickers);

    m_modelNotice = new QLabel(this);
    m_modelNotice->setObjectName(QStringLiteral("modelNotice"));
    m_modelNotice->setWordWrap(true);
    m_modelNotice->setText(tr("Generating needs a language model: choose one (or a remote "
                              "server) in Model ▸ Model Settings. Run works without one, on "
                              "tests you paste or open."));
    layout->addWidget(m_modelNotice);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_code = makeEditor(splitter, QStringLiteral("codeEditor"),
        tr("Paste code here, or drop a file (Python, C++, JavaScript, TypeScript, Go)"));
    m_tests = makeEditor(splitter, QStringLiteral("testsEditor"),
        tr("Tests: generated ones appear here as they are written; you can also paste your own "
           "and Run them"));
    m_code->installEventFilter(this);
    m_code->viewport()->installEventFilter(this);
    m_codeColours = new CodeHighlighter(m_code->document());
    m_testColours = new CodeHighlighter(m_tests->document());
    m_results = new QTreeWidget(splitter);
    m_results->setObjectName(QStringLiteral("resultsTree"));
    m_results->setHeaderLabels({ tr("Test"), tr("Result"), tr("Detail") });
    m_results->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_results->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    splitter->addWidget(m_code);
    splitter->addWidget(m_tests);
    splitter->addWidget(m_results);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 3);
    splitter->setStretchFactor(2, 2);
    layout->addWidget(splitter, 1);

    m_coverage = new QLabel(this);
    m_coverage->setObjectName(QStringLiteral("coverageLabel"));
    m_coverage->setWordWrap(true);
    layout->addWidget(m_coverage);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("codeStatus"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    auto* buttons = new QHBoxLayout;
    m_generate = new QPushButton(tr("Generate"), this);
    m_generate->setObjectName(QStringLiteral("generateButton"));
    m_run = new QPushButton(tr("Run"), this);
    m_run->setObjectName(QStringLiteral("runButton"));
    m_run->setToolTip(tr("Build and run the tests in the sandbox"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));
    m_save = new QPushButton(tr("Save Tests…"), this);
    m_save->setObjectName(QStringLiteral("saveButton"));
    auto* history = new QPushButton(tr("History…"), this);
    history->setObjectName(QStringLiteral("codeHistoryButton"));
    for (QPushButton* b : { m_generate, m_run, m_cancel, m_save, history })
        buttons->addWidget(b);
    layout->addLayout(buttons);

    connect(m_generate, &QPushButton::clicked, this, &CodePanel::generate);
    connect(m_run, &QPushButton::clicked, this, &CodePanel::runTests);
    connect(m_cancel, &QPushButton::clicked, this, &CodePanel::cancel);
    connect(m_save, &QPushButton::clicked, this, &CodePanel::saveTests);
    connect(history, &QPushButton::clicked, this, &CodePanel::showHistory);
    connect(m_language, &QComboBox::activated, this, [this] {
        m_languageChosen = true;
        setLanguage(language());
    });
    auto* detect = new QTimer(this);
    detect->setSingleShot(true);
    detect->setInterval(300);
    connect(detect, &QTimer::timeout, this, &CodePanel::detectLanguage);
    connect(m_code, &QPlainTextEdit::textChanged, detect, qOverload<>(&QTimer::start));

    CodeTestController* c = m_controller;
    connect(c, &CodeTestController::roundStarted, this, [this](int round) {
        m_status->setText(tr("Round %1: the model is writing…").arg(round));
        m_tests->clear();
        m_streaming = true;
    });
    connect(c, &CodeTestController::answerPiece, this, [this](const QString& piece) {
        if (!m_streaming)
            return;
        m_tests->moveCursor(QTextCursor::End);
        m_tests->insertPlainText(piece);
    });
    connect(c, &CodeTestController::status, m_status, &QLabel::setText);
    connect(c, &CodeTestController::roundFinished, this, &CodePanel::addRound);
    connect(c, &CodeTestController::generated, this,
        [this](const TestGenerationReport& report, qint64 id) {
            showReport(report);
            if (id > 0)
                m_status->setText(m_status->text() + tr(" · saved in the history"));
        });
    connect(c, &CodeTestController::historyLoaded, this, &CodePanel::showReport);
    connect(c, &CodeTestController::testsRan, this, &CodePanel::showRun);
    connect(c, &CodeTestController::failed, this, [this](const QString& message) {
        m_status->setText(message);
        emit failed(message);
    });
    connect(c, &CodeTestController::finished, this, [this] { setBusy(false); });
    refillSkills();
    setBusy(false);
}

CodePanel::~CodePanel() = default;

void CodePanel::setModel(const QString& path, int threads, const QString& device,
    qint64 contextLength, const QString& precision, double gpuMemoryGiB)
{
    m_controller->setModel(path, { threads, device, contextLength, precision, gpuMemoryGiB });
    updateModelNotice();
}

void CodePanel::setRemote(const generation::RemoteServer& server, generation::BackendOrder order)
{
    m_controller->setRemote(server, order);
    updateModelNotice();
}

void CodePanel::updateModelNotice()
{
    m_modelNotice->setVisible(!m_controller->hasBackend());
    setBusy(m_controller->busy());
}

QString CodePanel::language() const
{
    return m_language->currentData().toString();
}

void CodePanel::setLanguage(const QString& language)
{
    const int index = m_language->findData(language);
    if (index >= 0)
        m_language->setCurrentIndex(index);
    m_codeColours->setLanguage(language);
    m_testColours->setLanguage(language);
    refillSkills();
}

bool CodePanel::selectSkill(const QString& name)
{
    const int index = m_skill->findData(name);
    if (index >= 0)
        m_skill->setCurrentIndex(index);
    return index >= 0;
}

void CodePanel::refillSkills()
{
    const QString previous = m_skill->currentData().toString();
    m_skill->clear();
    for (const CodeSkill& s : m_controller->skills().skillsFor(language())) {
        m_skill->addItem(s.title, s.name);
        m_skill->setItemData(m_skill->count() - 1, s.description, Qt::ToolTipRole);
    }
    selectSkill(previous);
}

void CodePanel::detectLanguage()
{
    if (m_languageChosen)
        return;
    const QString found = cw::detectLanguage(m_codePath, m_code->toPlainText());
    if (!found.isEmpty() && found != language())
        setLanguage(found);
}

bool CodePanel::openCode(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        m_status->setText(tr("%1: %2").arg(path, file.errorString()));
        return false;
    }
    if (file.size() > kMaxCodeBytes) {
        m_status->setText(tr("%1 is larger than 1 MB; open one file or function at a time.")
                              .arg(QFileInfo(path).fileName()));
        return false;
    }
    auto text = readableCode(file.readAll(), QFileInfo(path).fileName());
    if (!text) {
        m_status->setText(QString::fromStdString(text.error().message));
        return false;
    }
    m_codePath = path;
    m_languageChosen = false;
    setCode(*text, QFileInfo(path).fileName());
    if (cw::detectLanguage(path, *text).isEmpty())
        m_status->setText(
            tr("The language of %1 is not known: choose it.").arg(QFileInfo(path).fileName()));
    else
        m_status->setText(tr("Opened %1").arg(path));
    return true;
}

void CodePanel::setCode(const QString& code, const QString& fileName)
{
    if (!fileName.isEmpty() && QFileInfo(fileName).fileName() != QFileInfo(m_codePath).fileName())
        m_codePath = fileName;
    m_code->setPlainText(code);
    m_testFileName.clear();
    detectLanguage();
}

QString CodePanel::codeFileName() const
{
    return m_codePath.isEmpty() ? QString() : QFileInfo(m_codePath).fileName();
}

void CodePanel::setBusy(bool busy)
{
    const bool haveModel = !m_controller->modelPath().isEmpty();
    m_generate->setEnabled(!busy && haveModel);
    m_generate->setToolTip(haveModel ? tr("Ask the skill; test skills run and repair their tests")
                                     : tr("Needs a model: Model ▸ Model Settings"));
    m_run->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_save->setEnabled(!busy);
}

void CodePanel::generate()
{
    const QString code = m_code->toPlainText();
    if (code.trimmed().isEmpty()) {
        m_status->setText(tr("There is no code: paste some or drop a file."));
        return;
    }
    if (code.toUtf8().size() > kMaxCodeBytes) {
        m_status->setText(tr("The code is larger than 1 MB; give one file or function at a time."));
        return;
    }
    m_results->clear();
    m_coverage->clear();
    TestGenerationOptions options;
    options.rounds = m_rounds->value();
    // The tests editor's content, when it holds tests (not an explanation or a review), counts
    // as the user's own tests: kept, and their coverage is the starting point.
    const QString tests = m_tests->toPlainText();
    const QString existing = splitTestFile(language(), tests).tests.isEmpty() ? QString() : tests;
    if (m_controller->generate(
            m_skill->currentData().toString(), code, codeFileName(), language(), existing, options))
        setBusy(true);
}

void CodePanel::runTests()
{
    m_results->clear();
    m_coverage->clear();
    m_streaming = false;
    if (m_controller->runTests(
            m_code->toPlainText(), codeFileName(), language(), m_tests->toPlainText()))
        setBusy(true);
}

void CodePanel::cancel()
{
    m_controller->cancel();
    m_status->setText(tr("Cancelling…"));
}

void CodePanel::addRound(const TestGenerationRound& round)
{
    auto* item = new QTreeWidgetItem(m_results, { tr("Round %1").arg(round.number) });
    QFont bold = item->font(0);
    bold.setBold(true);
    item->setFont(0, bold);
    if (!round.parseError.isEmpty()) {
        item->setText(1, tr("no tests"));
        item->setForeground(1, failColour());
        item->setText(2, round.parseError);
    } else if (!round.run.built && !round.verdicts.isEmpty()) {
        item->setText(1, tr("does not build"));
        item->setForeground(1, failColour());
        item->setText(2, round.run.buildOutput.trimmed().section('\n', -1).left(200));
        item->setToolTip(2, round.run.buildOutput.left(4000));
    } else {
        int kept = 0;
        for (const TestVerdict& v : round.verdicts)
            kept += v.kept ? 1 : 0;
        item->setText(1, tr("%1 of %2 kept").arg(kept).arg(round.verdicts.size()));
        item->setText(2, tr("coverage %1%").arg(round.coverageAfter, 0, 'f', 0));
    }
    for (const TestVerdict& v : round.verdicts) {
        QString detail;
        for (const TestCaseResult& c : round.run.cases) {
            if (c.name == v.name || c.name.startsWith(v.name + '/'))
                detail = c.output;
        }
        resultItem(item, v.name, v.reason, detail, v.kept ? passColour() : failColour());
    }
    item->setExpanded(true);
}

void CodePanel::showReport(const TestGenerationReport& report)
{
    m_streaming = false;
    if (m_results->topLevelItemCount() == 0) {
        for (const TestGenerationRound& r : report.rounds) // from the history
            addRound(r);
    }
    m_testFileName = report.testFileName;
    if (!report.code.isEmpty() && m_code->toPlainText() != report.code) {
        m_codePath = report.fileName;
        m_code->setPlainText(report.code);
    }
    if (!report.language.isEmpty())
        setLanguage(report.language);
    if (!report.keptTests.isEmpty())
        m_tests->setPlainText(report.keptTests);
    else if (!report.answer.isEmpty())
        m_tests->setPlainText(report.answer);
    else
        m_tests->clear();
    QString summary = report.summary();
    if (report.coverageMeasured && !report.uncoveredLines.isEmpty())
        summary += tr(" · lines not run: %1").arg(report.uncoveredLines);
    m_code->setLinesNotRun(
        report.coverageMeasured ? CodeEditor::linesOfRanges(report.uncoveredLines) : QSet<int>());
    if (!report.problem.isEmpty())
        summary += " · " + report.problem;
    m_coverage->setText(summary);
    m_status->setText(report.cancelled ? tr("Cancelled.") : tr("Done: %1").arg(report.summary()));
    emit generationShown(report);
}

void CodePanel::showRun(const TestRunResult& run)
{
    m_results->clear();
    if (!run.built) {
        auto* item = new QTreeWidgetItem(m_results,
            { tr("Build"), tr("failed"), run.buildOutput.trimmed().section('\n', -1).left(200) });
        item->setForeground(1, failColour());
        item->setToolTip(2, run.buildOutput.left(4000));
    }
    for (const TestCaseResult& c : run.cases) {
        const bool passed = c.outcome == TestOutcome::Passed;
        resultItem(m_results->invisibleRootItem(), c.name, testOutcomeName(c.outcome), c.output,
            passed                                  ? passColour()
                : c.outcome == TestOutcome::Skipped ? greyColour()
                                                    : failColour());
    }
    QString text = tr("%1 passed, %2 failed").arg(run.passed()).arg(run.failed());
    if (run.coverage.measured) {
        text += tr(" · line coverage %1%").arg(run.coverage.percent(), 0, 'f', 0);
        if (!run.coverage.uncoveredRanges().isEmpty())
            text += tr(" · lines not run: %1").arg(run.coverage.uncoveredRanges());
    }
    m_code->setLinesNotRun(
        run.coverage.measured ? run.coverage.executable - run.coverage.covered : QSet<int>());
    if (!run.limitMessage.isEmpty())
        text += " · " + run.limitMessage;
    m_coverage->setText(text);
    m_status->setText(tr("Ran in %1 s with %2").arg(run.seconds, 0, 'f', 1).arg(run.toolchain));
    emit testsShown(run);
}

QString CodePanel::defaultTestsPath() const
{
    const QString name = !m_testFileName.isEmpty() ? m_testFileName : [&] {
        // The runner's name for these tests, as a generation would use it.
        const QString code = TestWorkspace::safeCodeFileName(language(), codeFileName());
        auto runner = makeLanguageRunner(language());
        return runner ? runner->testFileName(code, m_code->toPlainText())
                      : QStringLiteral("tests.txt");
    }();
    const QFileInfo source(m_codePath);
    return source.isAbsolute() ? source.dir().filePath(name) : name;
}

Result<void> CodePanel::saveTestsTo(const QString& path)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return makeError(path.toStdString() + ": " + file.errorString().toStdString());
    file.write(m_tests->toPlainText().toUtf8());
    if (!file.commit())
        return makeError(path.toStdString() + ": " + file.errorString().toStdString());
    return {};
}

void CodePanel::saveTests()
{
    if (m_tests->toPlainText().trimmed().isEmpty()) {
        m_status->setText(tr("There are no tests to save."));
        return;
    }
    QString path = defaultTestsPath();
    if (!QFileInfo(path).isAbsolute() || QFileInfo::exists(path))
        path = QFileDialog::getSaveFileName(this, tr("Save tests"), path);
    if (path.isEmpty())
        return;
    if (auto saved = saveTestsTo(path); !saved) {
        m_status->setText(QString::fromStdString(saved.error().message));
        return;
    }
    m_status->setText(tr("Saved %1").arg(path));
}

void CodePanel::showHistory()
{
    auto* dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("codeHistoryDialog"));
    dialog->setWindowTitle(tr("Test generation history"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    auto* layout = new QVBoxLayout(dialog);
    auto* search = new QLineEdit(dialog);
    search->setPlaceholderText(tr("Search file names, skills, code and tests"));
    auto* list = new QListWidget(dialog);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Close, dialog);
    layout->addWidget(search);
    layout->addWidget(list, 1);
    layout->addWidget(buttons);
    dialog->resize(620, 420);
    auto listed = connect(m_controller, &CodeTestController::historyListed, list,
        [list](const QList<TestGenerationEntry>& entries) {
            list->clear();
            for (const TestGenerationEntry& e : entries) {
                auto* item = new QListWidgetItem(QStringLiteral("%1  %2 · %3 · %4")
                                                     .arg(e.createdAt.toString("yyyy-MM-dd HH:mm"),
                                                         e.fileName, e.skill, e.summary),
                    list);
                item->setData(Qt::UserRole, e.id);
                if (!e.snippet.isEmpty())
                    item->setToolTip(e.snippet);
            }
        });
    auto openSelected = [this, list, dialog] {
        if (!list->currentItem() || m_controller->busy())
            return;
        m_results->clear();
        m_controller->loadFromHistory(list->currentItem()->data(Qt::UserRole).toLongLong());
        dialog->accept();
    };
    connect(list, &QListWidget::itemActivated, dialog, openSelected);
    connect(buttons, &QDialogButtonBox::accepted, dialog, openSelected);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    connect(search, &QLineEdit::returnPressed, dialog,
        [this, search] { m_controller->listHistory(search->text()); });
    connect(dialog, &QDialog::finished, this, [listed] { QObject::disconnect(listed); });
    m_controller->listHistory({});
    dialog->show();
}

void CodePanel::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void CodePanel::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) {
        openCode(urls.first().toLocalFile());
        event->acceptProposedAction();
    }
}

bool CodePanel::eventFilter(QObject* watched, QEvent* event)
{
    // A file dropped on the code editor opens it instead of pasting its path.
    if ((watched == m_code || watched == m_code->viewport())
        && (event->type() == QEvent::DragEnter || event->type() == QEvent::Drop)) {
        auto* drop = static_cast<QDropEvent*>(event);
        if (drop->mimeData()->hasUrls()) {
            if (event->type() == QEvent::Drop)
                dropEvent(drop);
            else
                drop->acceptProposedAction();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace cw::ui
