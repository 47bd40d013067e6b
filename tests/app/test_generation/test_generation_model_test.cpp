// The engine's side of the code skills on the tiny random-weight model (tests/data/golden):
// prompts rendered with the model's chat template, the answer streamed piece by piece, the
// skill's static prefix prefilled once and forked by later requests, JSON skills decoded
// under their schema, the token limit and cancel honoured, and the whole loop running on
// the model's (useless) answers without crashing.
#include "app/code_skills/code_skill_host.h"
#include "app/code_skills/skill_output.h"
#include "app/test_generation/engine_skill_model.h"
#include "app/test_generation/test_generation.h"
#include "tests/app/test_runner/sandbox_skip.h"

#include <QElapsedTimer>
#include <QStandardPaths>
#include <QtTest>

using namespace cw;

namespace {

const QString kModel = QStringLiteral(CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a");
const QString kCode = QStringLiteral("def add(a, b):\n    return a + b\n");

} // namespace

class TestGenerationModelTest : public QObject {
    Q_OBJECT

    std::shared_ptr<llm::LlmSession> m_session;
    CodeSkillHost m_host;

    CodeSkill limited(const QString& name, int maxTokens)
    {
        CodeSkill skill = *m_host.skill(name);
        skill.sampling.maxTokens = maxTokens;
        skill.sampling.temperature = 0.0f;
        return skill;
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        auto session = llm::LlmSession::open(kModel, { 2 });
        QVERIFY2(session.ok(), session.ok() ? "" : session.error().message.c_str());
        m_session = *session;
    }

    void promptUsesTheChatTemplate()
    {
        EngineSkillModel model(m_session);
        const CodeSkill skill = limited("python-pytest", 8);
        SkillRequest request { kCode, "python", "calc.py", {}, {}, {}, false };
        const SkillMessages messages = renderSkillMessages(skill, request);
        auto tokens = model.promptTokens(messages);
        QVERIFY(tokens.ok());
        const QString text = QString::fromStdString(m_session->tokenizer().decode(*tokens));
        QVERIFY(text.startsWith("<|im_start|>system\n"));
        QVERIFY(text.contains("<|im_start|>user\nWrite pytest tests for the module `calc.py`"));
        QVERIFY(text.endsWith("<|im_start|>assistant\n") || text.contains("<think>"));
    }

    void streamsAndReusesTheSkillPrefix()
    {
        EngineSkillModel model(m_session);
        const CodeSkill skill = limited("python-pytest", 12);
        QString streamed;
        auto onText = [&](const QString& piece) { streamed += piece; };
        SkillRequest request { kCode, "python", "calc.py", {}, {}, {}, false };
        auto first = model.answer(skill, renderSkillMessages(skill, request), onText, {});
        QVERIFY2(first.ok(), first.ok() ? "" : first.error().message.c_str());
        QCOMPARE(streamed, first->text);
        QVERIFY(first->generatedTokens > 0 && first->generatedTokens <= 12);
        QCOMPARE(first->reusedPromptTokens, 0);
        // Other code, same skill: the chat header and system prompt come from the prefix
        // prefilled for the first two requests.
        for (const QString& code : { QStringLiteral("def sub(a, b):\n    return a - b\n"),
                 QStringLiteral("def neg(a):\n    return -a\n") }) {
            request.code = code;
            auto again = model.answer(skill, renderSkillMessages(skill, request), {}, {});
            QVERIFY(again.ok());
            if (code.startsWith("def neg"))
                QVERIFY2(again->reusedPromptTokens > 50,
                    qPrintable(QString::number(again->reusedPromptTokens)));
        }
        // Greedy and the same prompt: the same answer whether the prefix came from the cache.
        request.code = kCode;
        auto repeat = model.answer(skill, renderSkillMessages(skill, request), {}, {});
        QVERIFY(repeat.ok());
        QCOMPARE(repeat->text, first->text);
    }

    void jsonSkillsFollowTheirSchema()
    {
        EngineSkillModel model(m_session);
        const CodeSkill skill = limited("spec-test-cases", 600);
        SkillRequest request { "The total is never negative.", "text", "spec.txt", {}, {}, {},
            false };
        auto answer = model.answer(skill, renderSkillMessages(skill, request), {}, {});
        QVERIFY2(answer.ok(), answer.ok() ? "" : answer.error().message.c_str());
        if (answer->generatedTokens < 600) { // finished inside the limit: a whole object
            auto parsed = parseSkillOutput(skill, answer->text);
            QVERIFY2(parsed.ok(), qPrintable(answer->text));
            QVERIFY(parsed->json.contains("cases"));
        } else {
            QVERIFY(answer->text.startsWith("{"));
        }
    }

    void cancelStopsTheAnswer()
    {
        EngineSkillModel model(m_session);
        const CodeSkill skill = limited("explain-code", 4000);
        int pieces = 0;
        SkillRequest request { kCode, "python", "calc.py", {}, {}, {}, false };
        QElapsedTimer timer;
        timer.start();
        auto answer = model.answer(
            skill, renderSkillMessages(skill, request), [&](const QString&) { ++pieces; },
            [&] { return pieces >= 3; });
        QVERIFY(answer.ok());
        QVERIFY(answer->cancelled);
        QVERIFY(answer->generatedTokens < 100);
        QVERIFY(timer.elapsed() < 10000);
    }

    void theLoopRunsOnTheModelsAnswers()
    {
        auto sandbox = Sandbox::create();
        if (!sandbox)
            CW_SKIP_NO_SANDBOX(sandbox.error().message.c_str());
        auto shared = std::make_shared<Sandbox>(*sandbox);
        if (!probeToolchain(*shared, "python"))
            CW_SKIP_NO_SANDBOX("no pytest and coverage.py");
        EngineSkillModel model(m_session);
        const CodeSkill skill = limited("python-pytest", 16);
        TestGenerationOptions options;
        options.rounds = 2;
        int rounds = 0;
        TestGenerationObserver observer;
        observer.roundFinished = [&](const TestGenerationRound&) { ++rounds; };
        auto report
            = generateTests(model, skill, kCode, "calc.py", "python", shared, options, observer);
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().message.c_str());
        QCOMPARE(rounds, 2);
        // Random weights write no code block: nothing kept, and the second round was told so.
        QCOMPARE(report->kept, 0);
        QVERIFY(!report->rounds[0].parseError.isEmpty());
        QVERIFY(report->rounds[1].prompt.user.contains("could not be used"));
        QVERIFY(report->rounds[1].reusedPromptTokens >= 0);
        QCOMPARE(report->model, QString("qwen3_moe_a"));
    }
};

CW_SANDBOX_TEST_MAIN(TestGenerationModelTest)
#include "test_generation_model_test.moc"
