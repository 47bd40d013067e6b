#pragma once

#include "app/code_skills/code_skill_host.h"
#include "app/generation/backend_order.h"
#include "app/generation/remote_server.h"
#include "app/history/test_generation_history.h"
#include "app/llm_review/llm_session.h"
#include "app/test_generation/test_generation.h"

#include <QObject>
#include <QThread>
#include <atomic>
#include <memory>

namespace cw {

class EngineSkillModel;
class SkillModel;

// What the code panel asks for, run on a worker thread: a skill's generation (generate, run,
// repair, keep for test skills), a plain sandboxed run of tests the user has, and the saved
// generations of the history. Results come back as queued signals; one task at a time,
// cancelled within a model step or a sandboxed run.
class CodeTestController : public QObject {
    Q_OBJECT
public:
    // historyPath: the history database generations are saved in (empty: the default).
    // sessions: the loaded models to share with the reviews, so that one model is in memory
    // once (null: a cache of its own).
    explicit CodeTestController(QString historyPath = {},
        std::shared_ptr<llm::LlmSessionCache> sessions = {}, QObject* parent = nullptr);
    ~CodeTestController() override; // cancels and waits for the task

    CodeSkillHost& skills() { return m_skills; }
    bool busy() const { return m_worker != nullptr; }
    // The model generations use; empty: none (generation is refused with a message).
    void setModel(const QString& path, const llm::LlmSessionOptions& options);
    QString modelPath() const { return m_modelPath; }
    // The remote server and the order the backends are tried in, as the reviews take them
    // (Model Settings ▸ Remote server); the API key is read from RemoteKeyStore when
    // `keyFromStore`. Generation uses the first backend of the order that can be opened.
    void setRemote(const generation::RemoteServer& server, generation::BackendOrder order,
        bool keyFromStore = true);
    // Whether a backend of the order is set (a local model path, or a remote server), so that
    // generation can be asked for; whether it opens is known only when it is tried.
    bool hasBackend() const;
    const std::shared_ptr<llm::LlmSessionCache>& sessions() const { return m_sessions; }
    // Tests only run in the sandbox; the reason when there is none ("bubblewrap is not ...").
    QString sandboxProblem();

    // Each returns false (and emits failed) when a task is running or the input is refused.
    bool generate(const QString& skillName, const QString& code, const QString& fileName,
        const QString& language, const QString& existingTests,
        const TestGenerationOptions& options);
    bool runTests(const QString& code, const QString& fileName, const QString& language,
        const QString& tests);
    void cancel() { m_cancelled = true; }

    // The history's generations, newest first or matching a search (on the worker too).
    void listHistory(const QString& query);
    void loadFromHistory(qint64 id);

signals:
    void roundStarted(int round);
    void answerPiece(const QString& piece);
    void status(const QString& text);
    void roundFinished(const cw::TestGenerationRound& round);
    void generated(const cw::TestGenerationReport& report, qint64 historyId);
    void testsRan(const cw::TestRunResult& result);
    void historyListed(const QList<cw::TestGenerationEntry>& entries);
    void historyLoaded(const cw::TestGenerationReport& report);
    void failed(const QString& message);
    void finished(); // the task ended (after its result or failure signal)

private:
    bool start(std::function<void()> task);
    Result<std::shared_ptr<const Sandbox>> sandbox();

    QString m_historyPath;
    CodeSkillHost m_skills;
    QString m_modelPath;
    llm::LlmSessionOptions m_modelOptions;
    std::shared_ptr<llm::LlmSessionCache> m_sessions;
    // The first backend of the order that opens, on the worker; `passedOver` says why the
    // others were not used.
    Result<std::shared_ptr<SkillModel>> openBackend(
        const QString& modelPath, const llm::LlmSessionOptions& modelOptions, QString& passedOver);

    generation::RemoteServer m_remote;
    generation::BackendOrder m_order = generation::BackendOrder::LocalOnly;
    bool m_remoteKeyFromStore = true;
    std::shared_ptr<EngineSkillModel> m_model; // kept: its cached prefix serves later requests
    std::shared_ptr<const Sandbox> m_sandbox;
    QString m_sandboxProblem;
    bool m_sandboxChecked = false;
    QThread* m_worker = nullptr;
    std::atomic_bool m_cancelled = false;
};

} // namespace cw
