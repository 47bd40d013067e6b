#pragma once

#include "app/test_runner/language_runner.h"

namespace cw {

// pytest under coverage.py (Debian's python3-pytest and python3-coverage). One run gives
// each test's lines too (coverage's dynamic contexts, one per test function).
class PythonTestRunner : public LanguageRunner {
public:
    QString language() const override { return QStringLiteral("python"); }
    Result<QString> probe(const Sandbox& sandbox) override;
    QString testFileName(const QString& codeFile, const QString& code) const override;
    void build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
        const CancelFlag& cancelled) override;
    void execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
        TestRunResult& into, const CancelFlag& cancelled) override;
};

} // namespace cw
