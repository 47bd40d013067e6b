#pragma once

#include "app/test_generation/test_generation.h"

#include <QJsonObject>

namespace cw {

// The JSON forms `clausewright-cli run-tests --format json` and `testgen --format json`
// write (schemas: resources/schemas/run-tests.schema.json, testgen.schema.json). They are
// also what the history keeps of a generation.
constexpr int kTestRunJsonVersion = 1;

QJsonObject testRunToJson(const TestRunResult& run);
QJsonObject testGenerationToJson(const TestGenerationReport& report);
// Reads back what testGenerationToJson wrote (the history's copy).
TestGenerationReport testGenerationFromJson(const QJsonObject& json);

// A one-line-per-test text form of a run, for people: "PASS test_total (0.01 s)".
QString testRunText(const TestRunResult& run);

} // namespace cw
