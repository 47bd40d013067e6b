#pragma once

#include "engine/common/result.h"

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>
#include <optional>

namespace cw {

// How a skill's answer is read.
enum class SkillOutputKind {
    FencedCode, // the first ``` block (of the skill's fence language when it names one)
    Json, // one JSON object, valid under the skill's schema (decoding is constrained to it)
    PlainText, // the answer as written
};

struct SkillSampling {
    float temperature = 0.2f;
    float topP = 0.95f;
    int topK = 40;
    int maxTokens = 1024;
    bool operator==(const SkillSampling&) const = default;
};

// A code skill: a declarative file (YAML or JSON, one skill per file) saying how to ask the
// model for one kind of help with code, and how to read its answer. The prompt templates
// take placeholders in braces ({code}, {language}, {framework}, {file_name}, {module_name},
// {existing_tests}, {errors}, {uncovered_lines}); "{{" and "}}" are literal braces, and a
// section "{#name}...{/name}" is kept only when the placeholder `name` is not empty.
// The skill-file format this version reads ("format" in a file; absent: 1). A file of another
// format is refused with the same message the clause-head host gives a plugin of another ABI.
inline constexpr int kCodeSkillFormat = 1;

struct CodeSkill {
    QString name; // unique id, e.g. "python-pytest"
    QString title; // for the skill picker
    int version = 1;
    QStringList languages; // python, cpp, javascript, typescript, go, text
    QString description;
    QMap<QString, QString> frameworks; // language -> test framework named in {framework}
    QString systemTemplate;
    QString userTemplate;
    QString repairTemplate; // later rounds of a test generation; empty: userTemplate
    QStringList stopSequences;
    SkillSampling sampling;
    SkillOutputKind output = SkillOutputKind::PlainText;
    QString fenceLanguage; // FencedCode: preferred ``` info string ("python"); empty: any
    QByteArray jsonSchema; // Json: the schema as JSON text
    bool runnableTests = false; // its output is a test file the runner can build and run
    QString sourcePath; // the file it was loaded from

    bool supports(const QString& language) const { return languages.contains(language); }
};

// Placeholders a template may use.
const QStringList& skillPlaceholders();

// Parses one skill file (YAML 1.2, so JSON too). `fileName` names the file in errors, which
// say the line (1-based) and the field: "python.yaml: line 4: field 'languages' must be a
// list of language names". Unknown fields and unknown placeholders are errors, so a typo
// never silently changes a prompt.
Result<CodeSkill> parseCodeSkill(const QByteArray& text, const QString& fileName);

} // namespace cw
