#pragma once

#include "app/test_runner/sandbox.h"
#include "app/test_runner/test_run_types.h"

#include <QString>
#include <functional>
#include <memory>

namespace cw {

// The files of one test run, in a folder the sandbox may write to.
struct TestFiles {
    QString dir; // host path of the work folder (mounted at /sandbox)
    QString codeFile; // file names inside it
    QString testFile;
    QString code; // the code under test (for line counts)
};

using CancelFlag = std::function<bool()>;

// What one language's toolchain needs to build and run tests and measure their coverage.
// Every command runs in the sandbox. One class per language (python, cpp, javascript and
// typescript through node, go).
class LanguageRunner {
public:
    virtual ~LanguageRunner() = default;
    virtual QString language() const = 0;
    // Checks the toolchain from inside the sandbox; returns what it found ("python3 3.11.2,
    // pytest 7.2.1, coverage 6.5.0") or says what to install.
    virtual Result<QString> probe(const Sandbox& sandbox) = 0;
    // The test file's name for code in `codeFile` ("pricing.py" -> "test_pricing.py").
    virtual QString testFileName(const QString& codeFile, const QString& code) const = 0;
    // Compiles (C++, Go) or checks the syntax and collects the tests (Python, node).
    // Sets built, buildOutput and limitMessage of `into`.
    virtual void build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
        const CancelFlag& cancelled)
        = 0;
    // Runs the built tests (only `onlyTest` when given) with coverage; fills cases,
    // coverage, output and limitMessage.
    virtual void execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
        TestRunResult& into, const CancelFlag& cancelled)
        = 0;
};

// The runner for a language, or null when there is none ("text").
std::unique_ptr<LanguageRunner> makeLanguageRunner(const QString& language);

// Runs one sandboxed command in the files' folder; a limit that stopped it goes to
// `limitMessage`, an error starting it too. Returns the result (empty output on error).
SandboxResult runSandboxed(const Sandbox& sandbox, const QString& dir, const QStringList& argv,
    const SandboxLimits& limits, QString& limitMessage, const CancelFlag& cancelled,
    const QList<QPair<QString, QString>>& environment = {});

// Limits for building (compilers need more time and memory than the tests they build).
SandboxLimits buildLimits(const SandboxLimits& base);

} // namespace cw
