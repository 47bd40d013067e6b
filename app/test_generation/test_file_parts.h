#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace cw {

// One test in a test file: its source (with the decorators or comments right above it) and
// the names the framework reports for it (a Python test class or a JS describe block holds
// several; a Go test's subtests are reported as "TestX/case").
struct TestBlock {
    QString name; // test_total, Pricing.Discount, "adds two numbers", TestParse
    QStringList caseNames;
    QString text;
};

// A test file taken apart: everything that is not a test (imports, includes, helpers,
// fixtures), in order, and the tests.
struct TestFileParts {
    QString preamble;
    QList<TestBlock> tests;
};

// Splits a test file of a language (python, cpp, javascript, typescript, go). Tests are the
// top-level `def test_*` / `class Test*` (Python), TEST/TEST_F/TEST_P (GoogleTest),
// test()/it()/describe() calls (node:test) and `func TestXxx(t *testing.T)` (Go).
TestFileParts splitTestFile(const QString& language, const QString& text);

// A test file of the preambles (each line once, in order of first appearance) and the tests.
QString joinTestFile(const QStringList& preambles, const QList<TestBlock>& tests);

// Whether a reported case name belongs to the block.
bool blockOwnsCase(const TestBlock& block, const QString& caseName);

} // namespace cw
