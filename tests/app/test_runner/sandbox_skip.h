#pragma once

// The sandbox tests where the sandbox cannot run (no bubblewrap, user namespaces forbidden,
// no python3 to run in it): QSKIP alone would leave the test binary exiting 0, and CTest would
// report it Passed although it tested nothing. CW_SKIP_NO_SANDBOX skips the test function and
// marks the binary, and CW_SANDBOX_TEST_MAIN then exits 77, which CTest reports as Skipped
// (SKIP_RETURN_CODE in tests/CMakeLists.txt). With CW_REQUIRE_SANDBOX=1 in the environment
// (.ci/run) the test fails instead: CI must not pass on a machine where the sandbox is not
// tested.
#include <QCoreApplication>
#include <QtTest>
#include <cstdio>

namespace cw::testing {

inline bool& sandboxWasMissing()
{
    static bool missing = false;
    return missing;
}

inline bool sandboxRequired()
{
    return qEnvironmentVariableIntValue("CW_REQUIRE_SANDBOX") == 1;
}

// The exit status once the tests ran: their own when one failed, 77 when the sandbox could
// not run, else 0.
inline int sandboxTestExitCode(int failures)
{
    if (failures != 0 || !sandboxWasMissing())
        return failures;
    std::fprintf(stderr, "SKIPPED: the sandbox cannot run on this machine (exit 77)\n");
    return 77;
}

} // namespace cw::testing

#define CW_SKIP_NO_SANDBOX(reason)                                                                 \
    do {                                                                                           \
        if (cw::testing::sandboxRequired())                                                        \
            QFAIL(qPrintable(QStringLiteral("CW_REQUIRE_SANDBOX is set, and the sandbox cannot "   \
                                            "run here: ")                                          \
                + QString::fromUtf8(reason)));                                                     \
        cw::testing::sandboxWasMissing() = true;                                                   \
        QSKIP(reason);                                                                             \
    } while (false)

#define CW_SANDBOX_TEST_MAIN(TestObject)                                                           \
    int main(int argc, char** argv)                                                                \
    {                                                                                              \
        QCoreApplication app(argc, argv);                                                          \
        TestObject test;                                                                           \
        QTEST_SET_MAIN_SOURCE_PATH                                                                 \
        return cw::testing::sandboxTestExitCode(QTest::qExec(&test, argc, argv));                  \
    }
