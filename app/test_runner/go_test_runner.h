#pragma once

#include "app/test_runner/language_runner.h"

namespace cw {

// Go's testing package: the code and its test in one module folder ("module sandbox"),
// built once with `go test -c -cover`, run with -test.v and a coverage profile. The build
// cache lives in the work folder (nothing is fetched: there is no network).
class GoTestRunner : public LanguageRunner {
public:
    QString language() const override { return QStringLiteral("go"); }
    Result<QString> probe(const Sandbox& sandbox) override;
    QString testFileName(const QString& codeFile, const QString& code) const override;
    void build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
        const CancelFlag& cancelled) override;
    void execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
        TestRunResult& into, const CancelFlag& cancelled) override;
};

// `go test -v` output to per-test results ("--- PASS: TestParse (0.00s)").
QList<TestCaseResult> readGoTestOutput(const QString& output);
// A coverage profile ("mode: set" then "sandbox/x.go:3.20,5.2 2 1") for one file.
LineCoverage readGoCoverProfile(const QString& profile, const QString& codeFile);

} // namespace cw
