#include "app/history/history_schema.h"

#include "app/history/history_database.h"

namespace cw::history {
namespace {

// Version 1: documents, reviews, clauses, findings.
constexpr const char* kVersion1 = R"sql(
PRAGMA application_id = 1129793619;
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    pages INTEGER NOT NULL DEFAULT 0,
    format TEXT NOT NULL DEFAULT 'txt',
    text TEXT NOT NULL DEFAULT '',
    layout BLOB
);
CREATE INDEX documents_sha256 ON documents(sha256);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY,
    document_id INTEGER NOT NULL REFERENCES documents(id),
    model TEXT NOT NULL DEFAULT '',
    playbook TEXT NOT NULL DEFAULT '',
    settings TEXT NOT NULL DEFAULT '{}',
    timings TEXT NOT NULL DEFAULT '{}',
    summary TEXT NOT NULL DEFAULT '',
    missing TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL
);
CREATE INDEX reviews_document ON reviews(document_id);
CREATE TABLE clauses (
    review_id INTEGER NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    parent INTEGER NOT NULL,
    level INTEGER NOT NULL,
    kind TEXT NOT NULL,
    number TEXT NOT NULL,
    heading TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    own_end INTEGER NOT NULL,
    page INTEGER NOT NULL,
    PRIMARY KEY (review_id, idx)
) WITHOUT ROWID;
CREATE TABLE findings (
    id INTEGER PRIMARY KEY,
    review_id INTEGER NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    clause_index INTEGER NOT NULL,
    category TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    page INTEGER NOT NULL,
    text TEXT NOT NULL,
    fields TEXT NOT NULL DEFAULT '{}',
    confidence REAL NOT NULL,
    risk TEXT NOT NULL,
    rule TEXT NOT NULL DEFAULT '',
    rationale TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    needs_human_review INTEGER NOT NULL DEFAULT 0,
    UNIQUE (review_id, idx)
);
)sql";

// Version 2: user edits (the head's values kept, every edit logged) and per-review counts
// so the history list needs no aggregate over findings.
constexpr const char* kVersion2 = R"sql(
ALTER TABLE findings ADD COLUMN original_category TEXT;
ALTER TABLE findings ADD COLUMN original_risk TEXT;
ALTER TABLE findings ADD COLUMN user_comment TEXT NOT NULL DEFAULT '';
CREATE TABLE user_edits (
    id INTEGER PRIMARY KEY,
    finding_id INTEGER NOT NULL REFERENCES findings(id) ON DELETE CASCADE,
    edited_at INTEGER NOT NULL,
    old_category TEXT NOT NULL,
    new_category TEXT NOT NULL,
    old_risk TEXT NOT NULL,
    new_risk TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT ''
);
CREATE INDEX user_edits_finding ON user_edits(finding_id);
ALTER TABLE reviews ADD COLUMN clause_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN finding_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN high INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN medium INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN low INTEGER NOT NULL DEFAULT 0;
UPDATE reviews SET
    clause_count = (SELECT count(*) FROM clauses c WHERE c.review_id = reviews.id),
    finding_count = (SELECT count(*) FROM findings f WHERE f.review_id = reviews.id),
    high = (SELECT count(*) FROM findings f WHERE f.review_id = reviews.id AND f.risk = 'high'),
    medium = (SELECT count(*) FROM findings f WHERE f.review_id = reviews.id AND f.risk = 'medium'),
    low = (SELECT count(*) FROM findings f WHERE f.review_id = reviews.id AND f.risk = 'low');
CREATE INDEX reviews_created ON reviews(created_at DESC, id DESC);
)sql";

// Version 3: FTS5 indexes over contract text and findings, kept in step by triggers.
constexpr const char* kVersion3 = R"sql(
CREATE VIRTUAL TABLE documents_fts USING fts5(
    title, text, content='documents', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER documents_fts_update AFTER UPDATE OF title, text ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
    INSERT INTO documents_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE VIRTUAL TABLE findings_fts USING fts5(
    category, text, rationale, user_comment, content='findings', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER findings_fts_insert AFTER INSERT ON findings BEGIN
    INSERT INTO findings_fts(rowid, category, text, rationale, user_comment)
        VALUES (new.id, new.category, new.text, new.rationale, new.user_comment);
END;
CREATE TRIGGER findings_fts_delete AFTER DELETE ON findings BEGIN
    INSERT INTO findings_fts(findings_fts, rowid, category, text, rationale, user_comment)
        VALUES ('delete', old.id, old.category, old.text, old.rationale, old.user_comment);
END;
CREATE TRIGGER findings_fts_update AFTER UPDATE OF category, text, rationale, user_comment
    ON findings BEGIN
    INSERT INTO findings_fts(findings_fts, rowid, category, text, rationale, user_comment)
        VALUES ('delete', old.id, old.category, old.text, old.rationale, old.user_comment);
    INSERT INTO findings_fts(rowid, category, text, rationale, user_comment)
        VALUES (new.id, new.category, new.text, new.rationale, new.user_comment);
END;
INSERT INTO documents_fts(documents_fts) VALUES ('rebuild');
INSERT INTO findings_fts(findings_fts) VALUES ('rebuild');
)sql";

// Version 4: Chinese (and other CJK) search. unicode61 makes one token of a run of Chinese
// characters, so a word inside a sentence was never found; a trigram index finds any
// substring of three or more characters. Only rows that contain CJK text go into it (a
// trigram index of every English contract would triple the file for no gain), so every
// trigger repeats the same GLOB test on the values it indexes or removes.
#define CW_CJK_TEXT "GLOB '*[⺀-鿿가-힯豈-﫿＀-￯]*'"
constexpr const char* kVersion4 = R"sql(
CREATE VIRTUAL TABLE documents_cjk USING fts5(
    title, text, content='documents', content_rowid='id', tokenize='trigram');
CREATE TRIGGER documents_cjk_insert AFTER INSERT ON documents
    WHEN (new.title || ' ' || new.text) )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO documents_cjk(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER documents_cjk_delete AFTER DELETE ON documents
    WHEN (old.title || ' ' || old.text) )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO documents_cjk(documents_cjk, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER documents_cjk_update_old AFTER UPDATE OF title, text ON documents
    WHEN (old.title || ' ' || old.text) )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO documents_cjk(documents_cjk, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER documents_cjk_update_new AFTER UPDATE OF title, text ON documents
    WHEN (new.title || ' ' || new.text) )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO documents_cjk(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE VIRTUAL TABLE findings_cjk USING fts5(
    category, text, rationale, user_comment, content='findings', content_rowid='id',
    tokenize='trigram');
CREATE TRIGGER findings_cjk_insert AFTER INSERT ON findings
    WHEN (new.category || ' ' || new.text || ' ' || new.rationale || ' ' || new.user_comment)
        )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO findings_cjk(rowid, category, text, rationale, user_comment)
        VALUES (new.id, new.category, new.text, new.rationale, new.user_comment);
END;
CREATE TRIGGER findings_cjk_delete AFTER DELETE ON findings
    WHEN (old.category || ' ' || old.text || ' ' || old.rationale || ' ' || old.user_comment)
        )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO findings_cjk(findings_cjk, rowid, category, text, rationale, user_comment)
        VALUES ('delete', old.id, old.category, old.text, old.rationale, old.user_comment);
END;
CREATE TRIGGER findings_cjk_update_old AFTER UPDATE OF category, text, rationale, user_comment
    ON findings
    WHEN (old.category || ' ' || old.text || ' ' || old.rationale || ' ' || old.user_comment)
        )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO findings_cjk(findings_cjk, rowid, category, text, rationale, user_comment)
        VALUES ('delete', old.id, old.category, old.text, old.rationale, old.user_comment);
END;
CREATE TRIGGER findings_cjk_update_new AFTER UPDATE OF category, text, rationale, user_comment
    ON findings
    WHEN (new.category || ' ' || new.text || ' ' || new.rationale || ' ' || new.user_comment)
        )sql" CW_CJK_TEXT R"sql( BEGIN
    INSERT INTO findings_cjk(rowid, category, text, rationale, user_comment)
        VALUES (new.id, new.category, new.text, new.rationale, new.user_comment);
END;
INSERT INTO documents_cjk(rowid, title, text)
    SELECT id, title, text FROM documents
    WHERE (title || ' ' || text) )sql" CW_CJK_TEXT R"sql(;
INSERT INTO findings_cjk(rowid, category, text, rationale, user_comment)
    SELECT id, category, text, rationale, user_comment FROM findings
    WHERE (category || ' ' || text || ' ' || rationale || ' ' || user_comment)
        )sql" CW_CJK_TEXT R"sql(;
)sql";
#undef CW_CJK_TEXT

// Version 5: unit-test generations from the code panel (testgen), searchable like reviews.
constexpr const char* kVersion5 = R"sql(
CREATE TABLE test_generations (
    id INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,
    file_name TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL,
    skill TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    rounds INTEGER NOT NULL DEFAULT 0,
    kept INTEGER NOT NULL DEFAULT 0,
    discarded INTEGER NOT NULL DEFAULT 0,
    coverage_before REAL,
    coverage_after REAL,
    summary TEXT NOT NULL DEFAULT '',
    code TEXT NOT NULL DEFAULT '',
    kept_tests TEXT NOT NULL DEFAULT '',
    answer TEXT NOT NULL DEFAULT '',
    report TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX test_generations_created ON test_generations(created_at DESC, id DESC);
CREATE VIRTUAL TABLE test_generations_fts USING fts5(
    file_name, skill, model, code, kept_tests, answer, content='test_generations',
    content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER test_generations_fts_insert AFTER INSERT ON test_generations BEGIN
    INSERT INTO test_generations_fts(rowid, file_name, skill, model, code, kept_tests, answer)
        VALUES (new.id, new.file_name, new.skill, new.model, new.code, new.kept_tests, new.answer);
END;
CREATE TRIGGER test_generations_fts_delete AFTER DELETE ON test_generations BEGIN
    INSERT INTO test_generations_fts(test_generations_fts, rowid, file_name, skill, model, code,
        kept_tests, answer) VALUES ('delete', old.id, old.file_name, old.skill, old.model,
        old.code, old.kept_tests, old.answer);
END;
CREATE TRIGGER test_generations_fts_update AFTER UPDATE ON test_generations BEGIN
    INSERT INTO test_generations_fts(test_generations_fts, rowid, file_name, skill, model, code,
        kept_tests, answer) VALUES ('delete', old.id, old.file_name, old.skill, old.model,
        old.code, old.kept_tests, old.answer);
    INSERT INTO test_generations_fts(rowid, file_name, skill, model, code, kept_tests, answer)
        VALUES (new.id, new.file_name, new.skill, new.model, new.code, new.kept_tests, new.answer);
END;
)sql";

// Version 6: the wording the language model proposed for a finding (the redline's change).
constexpr const char* kVersion6 = R"sql(
ALTER TABLE findings ADD COLUMN suggested_text TEXT NOT NULL DEFAULT '';
)sql";

static_assert(HistoryDatabase::kSchemaVersion == 6, "add the new version's script here");

} // namespace

const char* migrationScript(int version)
{
    switch (version) {
    case 1:
        return kVersion1;
    case 2:
        return kVersion2;
    case 3:
        return kVersion3;
    case 4:
        return kVersion4;
    case 5:
        return kVersion5;
    case 6:
        return kVersion6;
    default:
        return nullptr;
    }
}

} // namespace cw::history
