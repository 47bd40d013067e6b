#pragma once

#include "app/code_skills/code_skill.h"
#include "app/test_generation/skill_model.h"
#include "app/test_runner/test_workspace.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <functional>
#include <memory>

namespace cw {

struct TestGenerationOptions {
    int rounds = 3; // answers asked for at most (the first and the repairs)
    int stableRuns = 3; // consecutive passing runs a test needs to be kept
    bool run = true; // false: only ask and parse (no sandbox needed)
    QString existingTests; // the user's own tests: kept as they are, count as covered
};

// What became of one generated test.
struct TestVerdict {
    QString name;
    bool kept = false;
    QString reason; // "kept: +4 lines", "failed in run 2 of 3", "adds no coverage", ...
    int newLines = 0; // lines it covered that no earlier test did
    // It built and ran, and its assertion failed in every run: it expects something the code
    // does not do. Either it or the code is wrong, and a test that finds a bug is the one
    // most worth having, so it is shown ("fails: the code may be wrong here"), not dropped.
    bool suspectsCode = false;
};

struct TestGenerationRound {
    int number = 1;
    SkillMessages prompt;
    QString answer; // the model's text
    QString tests; // the test file read from it
    QString parseError; // the answer had no usable test file
    TestRunResult run; // the first of its runs
    int stableRuns = 0; // runs made
    QList<TestVerdict> verdicts;
    double coverageAfter = 0.0; // percent of lines covered by the tests kept so far
    std::int64_t promptTokens = 0;
    std::int64_t reusedPromptTokens = 0;
};

struct TestGenerationReport {
    QString skill;
    QString model;
    QString language;
    QString fileName; // the code's (as given)
    QString code;
    QString toolchain;
    QString testFileName; // where the kept tests belong beside the code ("test_pricing.py")
    QList<TestGenerationRound> rounds;
    QString keptTests; // the final file: the user's tests and the kept ones
    // The tests whose assertions fail against the code (TestVerdict::suspectsCode) and that
    // no later round replaced with a passing test of the same name: a file of their own, to
    // be read against the code's documentation. Empty when there are none.
    QString failingTests;
    int failing = 0;
    int kept = 0;
    int discarded = 0;
    bool coverageMeasured = false;
    double coverageBefore = 0.0; // percent, the user's tests alone (0 without)
    double coverageAfter = 0.0;
    QString uncoveredLines; // after
    TestRunResult finalRun; // the kept file run once more
    QString problem; // the kept tests together did not pass (they are still shown)
    QString answer; // skills whose output is not tests: the parsed answer (text)
    QJsonObject answerJson; // ... and for JSON skills, the object
    bool cancelled = false;
    double seconds = 0.0;

    QString summary() const; // "2 kept, 3 discarded, 1 fails against the code; coverage 0% -> 85%"
};

// Progress, called on the generating thread.
struct TestGenerationObserver {
    std::function<void(int round)> roundStarted;
    std::function<void(const QString& piece)> answerPiece;
    std::function<void(const QString& what)> status; // "building", "run 2 of 3", ...
    std::function<void(const TestGenerationRound& round)> roundFinished;
};

// Generate, run, repair, keep. Asks the model for tests, builds and runs them in the
// sandbox; a test is kept only when it builds, passes `stableRuns` runs in a row and covers
// a line no kept test covers. Failures and build errors go back to the model (the skill's
// repair prompt, with the kept tests and the lines still uncovered) for up to `rounds`
// answers. Skills whose output is not runnable tests are asked once and their answer
// parsed. Errors: the skill does not take the language, the sandbox or toolchain is
// missing (when running), the model failed. A cancel returns what was done, marked.
Result<TestGenerationReport> generateTests(SkillModel& model, const CodeSkill& skill,
    const QString& code, const QString& fileName, const QString& language,
    std::shared_ptr<const Sandbox> sandbox, const TestGenerationOptions& options,
    const TestGenerationObserver& observer = {}, const std::function<bool()>& cancelled = {});

} // namespace cw
