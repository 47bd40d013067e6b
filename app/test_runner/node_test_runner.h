#pragma once

#include "app/test_runner/language_runner.h"

namespace cw {

// node:test through `node --test` (junit report for the results, the built-in
// --experimental-test-coverage for line coverage). TypeScript runs with
// --experimental-strip-types, which needs node 22.6 or newer.
class NodeTestRunner : public LanguageRunner {
public:
    explicit NodeTestRunner(QString language)
        : m_language(std::move(language))
    {
    }
    QString language() const override { return m_language; }
    Result<QString> probe(const Sandbox& sandbox) override;
    QString testFileName(const QString& codeFile, const QString& code) const override;
    void build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
        const CancelFlag& cancelled) override;
    void execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
        TestRunResult& into, const CancelFlag& cancelled) override;

private:
    QStringList nodeFlags() const;

    QString m_language;
};

// Reads node's coverage table ("# file | line % | branch % | funcs % | uncovered lines") for
// one file: every line of the file counts, the uncovered ones are listed.
LineCoverage readNodeCoverage(const QString& output, const QString& codeFile, int lineCount);

} // namespace cw
