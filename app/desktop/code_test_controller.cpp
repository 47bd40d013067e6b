#include "app/desktop/code_test_controller.h"

#include "app/desktop/remote_key_store.h"
#include "app/generation/remote_generator.h"
#include "app/test_generation/engine_skill_model.h"
#include "app/test_generation/generator_skill_model.h"
#include "app/test_runner/code_language.h"

#include <QFileInfo>

namespace cw {

CodeTestController::CodeTestController(
    QString historyPath, std::shared_ptr<llm::LlmSessionCache> sessions, QObject* parent)
    : QObject(parent)
    , m_historyPath(historyPath.isEmpty() ? HistoryDatabase::defaultPath() : std::move(historyPath))
    , m_sessions(sessions ? std::move(sessions) : std::make_shared<llm::LlmSessionCache>())
{
    qRegisterMetaType<cw::TestGenerationRound>();
    qRegisterMetaType<cw::TestGenerationReport>();
    qRegisterMetaType<cw::TestRunResult>();
    qRegisterMetaType<QList<cw::TestGenerationEntry>>();
}

CodeTestController::~CodeTestController()
{
    m_cancelled = true;
    if (m_worker) {
        m_worker->wait();
        delete m_worker;
    }
    m_model.reset();
}

void CodeTestController::setModel(const QString& path, const llm::LlmSessionOptions& options)
{
    if (path == m_modelPath && options == m_modelOptions)
        return;
    m_modelPath = path;
    m_modelOptions = options;
    if (!busy())
        m_model.reset(); // loaded again on the next generation
}

void CodeTestController::setRemote(
    const generation::RemoteServer& server, generation::BackendOrder order, bool keyFromStore)
{
    m_remote = server;
    m_order = order;
    m_remoteKeyFromStore = keyFromStore;
}

bool CodeTestController::hasBackend() const
{
    const auto backends = generation::backendsOf(m_order);
    return (backends.contains(generation::Backend::InProcess) && !m_modelPath.isEmpty())
        || (backends.contains(generation::Backend::Remote) && m_remote.isSet());
}

Result<std::shared_ptr<SkillModel>> CodeTestController::openBackend(
    const QString& modelPath, const llm::LlmSessionOptions& modelOptions, QString& passedOver)
{
    QStringList problems;
    for (const generation::Backend backend : generation::backendsOf(m_order)) {
        if (backend == generation::Backend::Remote) {
            if (!m_remote.isSet()) {
                problems << tr("no remote server is set");
                continue;
            }
            generation::RemoteServer server = m_remote;
            if (m_remoteKeyFromStore) {
                auto key = RemoteKeyStore::read();
                if (!key) {
                    problems << tr("the remote server's API key: %1")
                                    .arg(QString::fromStdString(key.error().message));
                    continue;
                }
                server.apiKey = *key;
            }
            passedOver = problems.join(QStringLiteral("; "));
            return std::shared_ptr<SkillModel>(std::make_shared<GeneratorSkillModel>(
                std::make_unique<generation::RemoteGenerator>(server)));
        }
        if (modelPath.isEmpty()) {
            problems << tr("no local model is set");
            continue;
        }
        // Settings changed while a task ran: the model is loaded again for the new ones.
        if (m_model
            && (m_model->session()->path() != QFileInfo(modelPath).absoluteFilePath()
                || !(m_model->session()->options() == modelOptions)))
            m_model.reset();
        if (!m_model) {
            emit status(tr("Loading %1…").arg(modelPath));
            auto session = m_sessions->get(modelPath, modelOptions);
            if (!session) {
                problems << QString::fromStdString(session.error().message);
                continue;
            }
            m_model = std::make_shared<EngineSkillModel>(*session);
        }
        passedOver = problems.join(QStringLiteral("; "));
        return std::shared_ptr<SkillModel>(m_model);
    }
    return makeError(tr("No language model could be used: %1.")
                         .arg(problems.join(QStringLiteral("; ")))
                         .toStdString());
}

Result<std::shared_ptr<const Sandbox>> CodeTestController::sandbox()
{
    if (!m_sandboxChecked) {
        m_sandboxChecked = true;
        auto created = Sandbox::create();
        if (created)
            m_sandbox = std::make_shared<Sandbox>(*created);
        else
            m_sandboxProblem = QString::fromStdString(created.error().message);
    }
    if (!m_sandbox)
        return makeError(m_sandboxProblem.toStdString());
    return m_sandbox;
}

QString CodeTestController::sandboxProblem()
{
    auto s = sandbox();
    return s ? QString() : QString::fromStdString(s.error().message);
}

bool CodeTestController::start(std::function<void()> task)
{
    if (m_worker) {
        emit failed(tr("Another task is still running."));
        return false;
    }
    m_cancelled = false;
    m_worker = QThread::create(std::move(task));
    connect(m_worker, &QThread::finished, this, [this] {
        m_worker->deleteLater();
        m_worker = nullptr;
        emit finished();
    });
    m_worker->start();
    return true;
}

bool CodeTestController::generate(const QString& skillName, const QString& code,
    const QString& fileName, const QString& language, const QString& existingTests,
    const TestGenerationOptions& options)
{
    const CodeSkill* found = m_skills.skill(skillName);
    if (!found) {
        emit failed(tr("There is no skill named %1.").arg(skillName));
        return false;
    }
    if (!hasBackend()) {
        emit failed(tr("Generating needs a language model: choose one (or a remote server) in "
                       "Model ▸ Model Settings. Run works without one."));
        return false;
    }
    std::shared_ptr<const Sandbox> box;
    if (found->runnableTests && options.run) {
        auto s = sandbox();
        if (!s) {
            emit failed(QString::fromStdString(s.error().message));
            return false;
        }
        box = *s;
    }
    const CodeSkill skill = *found;
    TestGenerationOptions withTests = options;
    withTests.existingTests = existingTests;
    const QString modelPath = m_modelPath;
    const llm::LlmSessionOptions modelOptions = m_modelOptions;
    return start([=, this] {
        QString passedOver;
        auto model = openBackend(modelPath, modelOptions, passedOver);
        if (!model) {
            emit failed(QString::fromStdString(model.error().message));
            return;
        }
        emit status(passedOver.isEmpty()
                ? tr("Generating with %1").arg((*model)->name())
                : tr("Generating with %1 (passed over: %2)").arg((*model)->name(), passedOver));
        TestGenerationObserver observer;
        observer.roundStarted = [this](int n) { emit roundStarted(n); };
        observer.answerPiece = [this](const QString& piece) { emit answerPiece(piece); };
        observer.status = [this](const QString& s) { emit status(s); };
        observer.roundFinished = [this](const TestGenerationRound& r) { emit roundFinished(r); };
        auto report = generateTests(**model, skill, code, fileName, language, box, withTests,
            observer, [this] { return m_cancelled.load(); });
        if (!report) {
            emit failed(QString::fromStdString(report.error().message));
            return;
        }
        qint64 id = 0;
        auto db = HistoryDatabase::open(m_historyPath);
        auto saved = db ? saveTestGeneration(**db, *report) : Result<qint64>(db.error());
        if (saved)
            id = *saved;
        else
            emit status(tr("Not saved in the history: %1")
                            .arg(QString::fromStdString(saved.error().message)));
        emit generated(*report, id);
    });
}

bool CodeTestController::runTests(
    const QString& code, const QString& fileName, const QString& language, const QString& tests)
{
    auto s = sandbox();
    if (!s) {
        emit failed(QString::fromStdString(s.error().message));
        return false;
    }
    if (tests.trimmed().isEmpty()) {
        emit failed(tr("There are no tests to run: write or paste them, or generate them."));
        return false;
    }
    std::shared_ptr<const Sandbox> box = *s;
    return start([=, this] {
        emit status(tr("Building and running the tests…"));
        auto workspace = TestWorkspace::create(box, language, fileName, code);
        if (!workspace) {
            emit failed(QString::fromStdString(workspace.error().message));
            return;
        }
        emit testsRan((*workspace)->run(tests, {}, [this] { return m_cancelled.load(); }));
    });
}

void CodeTestController::listHistory(const QString& query)
{
    start([=, this] {
        auto db = HistoryDatabase::open(m_historyPath);
        if (!db) {
            emit failed(QString::fromStdString(db.error().message));
            return;
        }
        auto entries = query.trimmed().isEmpty() ? listTestGenerations(**db, 0, 200)
                                                 : searchTestGenerations(**db, query, 200);
        if (!entries) {
            emit failed(QString::fromStdString(entries.error().message));
            return;
        }
        emit historyListed(*entries);
    });
}

void CodeTestController::loadFromHistory(qint64 id)
{
    start([=, this] {
        auto db = HistoryDatabase::open(m_historyPath);
        auto report = db ? loadTestGeneration(**db, id) : Result<TestGenerationReport>(db.error());
        if (!report) {
            emit failed(QString::fromStdString(report.error().message));
            return;
        }
        emit historyLoaded(*report);
    });
}

} // namespace cw
