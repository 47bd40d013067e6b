#pragma once

#include "app/test_runner/test_run_types.h"

#include <QByteArray>

namespace cw {

// Reads a JUnit XML report (pytest --junitxml, GoogleTest --gtest_output=xml, node's junit
// reporter): one result per <testcase>, named "classname.name" when `qualify` (GoogleTest's
// Suite.Test) else "name". A <failure> or <error> fails it, <skipped> skips it.
QList<TestCaseResult> readJUnitReport(const QByteArray& xml, bool qualify);

} // namespace cw
