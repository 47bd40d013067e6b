#pragma once

// The history database's schema, one SQL script per version. Script N takes a database at
// version N-1 to version N; a new version appends a script and never edits an old one.
// Internal to app/history (tests use it to build databases at earlier versions).
namespace cw::history {

// 'CWHS': PRAGMA application_id of a Clausewright history database.
constexpr int kApplicationId = 0x43574853;

// The script that migrates from version-1 to version (1..HistoryDatabase::kSchemaVersion).
const char* migrationScript(int version);

} // namespace cw::history
