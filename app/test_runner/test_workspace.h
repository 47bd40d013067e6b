#pragma once

#include "app/test_runner/language_runner.h"

#include <QTemporaryDir>
#include <memory>

namespace cw {

// The code under test in a fresh temporary folder (the only place the sandbox may write),
// against which test files are built and run. The folder and everything the tests wrote in
// it are removed with the workspace. One thread at a time.
class TestWorkspace {
public:
    // Errors: no runner for the language, its toolchain missing (with what to install), the
    // folder cannot be made. `codeFileName` is reduced to a safe name with the language's
    // extension ("my code.py" -> "my_code.py"; empty -> "code_under_test.py").
    static Result<std::unique_ptr<TestWorkspace>> create(std::shared_ptr<const Sandbox> sandbox,
        const QString& language, const QString& codeFileName, const QString& code);

    const QString& language() const { return m_language; }
    const QString& toolchain() const { return m_toolchain; }
    const QString& codeFile() const { return m_files.codeFile; }
    const QString& testFile() const { return m_files.testFile; }

    // Gives the test file the user's own name ("test_bad.py"), so that what the framework
    // prints names the file they wrote. False, and the runner's name kept, where the name
    // does not suit the language's runner (its suffix differs from the runner's: ".py",
    // ".cpp", ".mjs"; Go wants "*_test.go"), holds characters other than
    // letters, digits, '_', '-' and '.', or is the code file's or the runner's own.
    bool useTestFileName(const QString& name);

    // Writes the test file, builds it when it differs from the last one built, and runs it
    // (only the test named `onlyTest` when given).
    TestRunResult run(
        const QString& tests, const QString& onlyTest = {}, const CancelFlag& cancelled = {});

    // A file name safe for the sandbox and the language ("pricing.py").
    static QString safeCodeFileName(const QString& language, const QString& name);

private:
    TestWorkspace() = default;

    std::shared_ptr<const Sandbox> m_sandbox;
    std::unique_ptr<LanguageRunner> m_runner;
    QString m_language;
    QString m_toolchain;
    QTemporaryDir m_dir;
    TestFiles m_files;
    QString m_builtTests;
    TestRunResult m_build; // the last build's outcome
    bool m_haveBuild = false;
};

// Checks the toolchain of a language once per process (the answer is kept).
Result<QString> probeToolchain(const Sandbox& sandbox, const QString& language);

} // namespace cw
