#pragma once

#include "app/test_runner/language_runner.h"

namespace cw {

// GoogleTest tests compiled with g++ -std=c++20 --coverage against Debian's libgtest-dev,
// coverage from gcov. The test file includes the code under test (a header or a .cpp); a
// main() in it is renamed so gtest_main's runs. The code is also compiled alone with its
// inline functions kept, so that functions no test calls still count as lines to cover.
class CppTestRunner : public LanguageRunner {
public:
    QString language() const override { return QStringLiteral("cpp"); }
    Result<QString> probe(const Sandbox& sandbox) override;
    QString testFileName(const QString& codeFile, const QString& code) const override;
    void build(const Sandbox& sandbox, const TestFiles& files, TestRunResult& into,
        const CancelFlag& cancelled) override;
    void execute(const Sandbox& sandbox, const TestFiles& files, const QString& onlyTest,
        TestRunResult& into, const CancelFlag& cancelled) override;
};

} // namespace cw
