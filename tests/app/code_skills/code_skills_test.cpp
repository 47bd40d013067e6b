// Code skills: every shipped skill loads, renders its prompts without a placeholder left and
// parses an answer of its kind; JSON skills' schemas are within what the engine can constrain
// decoding to; malformed files are reported (file, line, problem) and skipped; a user's
// skill replaces a built-in one of the same name.
#include "app/code_skills/code_skill_host.h"
#include "app/code_skills/skill_output.h"
#include "app/code_skills/skill_prompt.h"
#include "engine/sampling/json_schema_grammar.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace cw;

namespace {

const QStringList kShipped = { "python-pytest", "cpp-gtest", "javascript-node-test", "go-testing",
    "code-completion", "docstrings", "bug-review", "explain-code", "refactoring", "spec-test-cases",
    "clause-compliance-checklist" };

void writeFile(const QString& path, const QByteArray& text)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

// A JSON value with every required property of the schema, of the right type.
QJsonValue sampleFor(const QJsonObject& schema)
{
    const QString type = schema.value("type").toString();
    if (schema.contains("enum"))
        return schema.value("enum").toArray().first();
    if (type == "object") {
        QJsonObject object;
        const QJsonObject properties = schema.value("properties").toObject();
        for (const QJsonValue& key : schema.value("required").toArray())
            object.insert(key.toString(), sampleFor(properties.value(key.toString()).toObject()));
        return object;
    }
    if (type == "array")
        return QJsonArray { sampleFor(schema.value("items").toObject()) };
    if (type == "integer" || type == "number")
        return 3;
    if (type == "boolean")
        return true;
    return QStringLiteral("text");
}

} // namespace

class CodeSkillsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void everyShippedSkillLoads()
    {
        CodeSkillHost host;
        QVERIFY2(host.errors().isEmpty(), qPrintable(host.errors().join('\n')));
        QStringList names;
        for (const CodeSkill& s : host.skills())
            names.append(s.name);
        for (const QString& name : kShipped)
            QVERIFY2(names.contains(name), qPrintable(name));
        QVERIFY(host.skill("python-pytest")->runnableTests);
        QCOMPARE(host.skillsFor("python").first().name, QString("python-pytest"));
        QCOMPARE(host.skillsFor("text").size(), 2);
    }

    void eachSkillRendersAndParses_data()
    {
        QTest::addColumn<QString>("name");
        for (const QString& name : kShipped)
            QTest::newRow(qPrintable(name)) << name;
    }

    void eachSkillRendersAndParses()
    {
        QFETCH(QString, name);
        CodeSkillHost host;
        const CodeSkill* skill = host.skill(name);
        QVERIFY(skill);
        SkillRequest request;
        request.language = skill->languages.first();
        request.code = QStringLiteral("def f(x):\n    return {'a': x}  # {not a placeholder}\n");
        request.fileName = QStringLiteral("module.py");
        const SkillMessages first = renderSkillMessages(*skill, request);
        QVERIFY(first.user.contains(request.code.trimmed()));
        static const QRegularExpression kLeft(
            "\\{(#|/)?(" + skillPlaceholders().join('|') + ")\\}");
        QVERIFY2(!kLeft.match(first.system + first.user).hasMatch(), qPrintable(first.user));
        QVERIFY(!first.system.isEmpty());
        if (skill->runnableTests) {
            QVERIFY(!first.user.contains("do not repeat")); // no existing tests: no section
            request.errors = QStringLiteral("AssertionError: 4 != 5");
            request.existingTests = QStringLiteral("def test_old(): pass");
            request.uncoveredLines = QStringLiteral("7-9");
            request.repair = true;
            const SkillMessages repair = renderSkillMessages(*skill, request);
            QVERIFY(repair.user.contains("AssertionError: 4 != 5"));
            QVERIFY(repair.user.contains("def test_old(): pass"));
            QVERIFY(!skill->frameworks.value(request.language).isEmpty());
            QVERIFY(first.system.contains(skill->frameworks.value(request.language)));
        }

        QString answer;
        switch (skill->output) {
        case SkillOutputKind::FencedCode:
            answer = "<think>\nplan\n</think>\nHere:\n```" + skill->fenceLanguage
                + "\ndef test_f():\n    assert f(1) == {'a': 1}\n```\nDone.";
            break;
        case SkillOutputKind::Json: {
            const QJsonObject schema = QJsonDocument::fromJson(skill->jsonSchema).object();
            auto gbnf = sampling::jsonSchemaToGbnf(skill->jsonSchema.toStdString());
            QVERIFY2(gbnf.ok(), gbnf.ok() ? "" : gbnf.error().message.c_str());
            answer = QString::fromUtf8(
                QJsonDocument(sampleFor(schema).toObject()).toJson(QJsonDocument::Compact));
            break;
        }
        case SkillOutputKind::PlainText:
            answer = QStringLiteral("It returns a mapping.");
            break;
        }
        auto parsed = parseSkillOutput(*skill, answer);
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        if (skill->output == SkillOutputKind::FencedCode)
            QCOMPARE(parsed->code, QString("def test_f():\n    assert f(1) == {'a': 1}\n"));
        if (skill->output == SkillOutputKind::Json)
            QVERIFY(!parsed->json.isEmpty());
    }

    void sectionsAndBracesRender()
    {
        QVERIFY(checkSkillTemplate("a {{b}} {#errors}E: {errors}{/errors} {code}").ok());
        QCOMPARE(renderSkillTemplate("a {{b}} {#errors}E: {errors}{/errors}|{code}",
                     { { "code", "{x}" }, { "errors", "" } }),
            QString("a {b} |{x}"));
        QCOMPARE(renderSkillTemplate("{#errors}E: {errors}{/errors}", { { "errors", "boom" } }),
            QString("E: boom"));
        QVERIFY(!checkSkillTemplate("{nope}").ok());
        QVERIFY(!checkSkillTemplate("{#errors} open").ok());
        QVERIFY(!checkSkillTemplate("close {/errors}").ok());
        QVERIFY(!checkSkillTemplate("a } b").ok());
        QVERIFY(!checkSkillTemplate("a { b").ok());
    }

    void readsAnswers()
    {
        CodeSkillHost host;
        const CodeSkill& tests = *host.skill("python-pytest");
        QVERIFY(!parseSkillOutput(tests, "no code here").ok());
        QVERIFY(QString::fromStdString(
            parseSkillOutput(tests, "```python\ndef test_x():\n").error().message)
                    .contains("cut off"));
        // The python block is chosen over an earlier shell block.
        auto two = parseSkillOutput(tests, "```sh\npytest\n```\n```py\nassert 1\n```\n");
        QVERIFY(two.ok());
        QCOMPARE(two->code, QString("assert 1\n"));
        // Still thinking when the answer stopped: nothing to use.
        QVERIFY(!parseSkillOutput(tests, "<think>\n```python\nx\n```").ok());
        const CodeSkill& review = *host.skill("bug-review");
        QVERIFY(!parseSkillOutput(review, "{\"summary\": \"s\"}").ok()); // no findings
        QVERIFY(
            parseSkillOutput(review, "```json\n{\"summary\": \"s\", \"findings\": []}\n```").ok());
    }

    void malformedFilesAreReportedAndSkipped()
    {
        QTemporaryDir dir;
        writeFile(dir.filePath("a_bad_yaml.yaml"), "name: x\nlanguages: [python\nsystem: s\n");
        writeFile(dir.filePath("b_unknown_field.yaml"),
            "name: b\nlanguages: [python]\nsystem: s\nuser: u\noutput: {parser: text}\n"
            "temprature: 0.3\n");
        writeFile(dir.filePath("c_placeholder.yaml"),
            "name: c\nlanguages: [python]\nsystem: s\nuser: |\n  {code}\n  {cod}\n"
            "output: {parser: text}\n");
        writeFile(dir.filePath("d_no_name.yaml"),
            "languages: [python]\nsystem: s\nuser: u\noutput: {parser: text}\n");
        writeFile(dir.filePath("e_parser.json"),
            "{\"name\": \"e\", \"languages\": [\"python\"], \"system\": \"s\", \"user\": \"u\",\n"
            " \"output\": {\"parser\": \"xml\"}}\n");
        writeFile(dir.filePath("f_language.yaml"),
            "name: f\nlanguages: [cobol]\nsystem: s\nuser: u\noutput: {parser: text}\n");
        writeFile(dir.filePath("g_binary.yaml"), QByteArray("name: g\0\0", 9));
        writeFile(dir.filePath("h_sampling.yaml"),
            "name: h\nlanguages: [go]\nsystem: s\nuser: u\noutput: {parser: text}\n"
            "sampling: {temperature: 7}\n");
        writeFile(dir.filePath("i_json_no_schema.yaml"),
            "name: i\nlanguages: [go]\nsystem: s\nuser: u\noutput: {parser: json}\n");
        writeFile(dir.filePath("j_format.yaml"),
            "format: 2\nname: j\nlanguages: [go]\nsystem: s\nuser: u\noutput: {parser: text}\n");
        writeFile(dir.filePath("z_good.yaml"),
            "name: my-skill\nlanguages: [python]\nsystem: Be brief.\nuser: \"Explain {code}\"\n"
            "output: {parser: text}\n");
        CodeSkillHost host({ dir.path() });
        const QStringList errors = host.errors();
        QCOMPARE(errors.size(), 10);
        const QStringList expected = { "a_bad_yaml.yaml: line 3: not valid YAML",
            "b_unknown_field.yaml: line 6: unknown field 'temprature'",
            "c_placeholder.yaml: line 4: field 'user': unknown placeholder '{cod}'",
            "d_no_name.yaml: line 1: field 'name' is missing",
            "e_parser.json: line 2: field 'output.parser' must be fenced_code, json or text",
            "f_language.yaml: line 2: unknown language 'cobol'",
            "g_binary.yaml: a skill file must be text",
            "h_sampling.yaml: line 6: field 'sampling.temperature' must be between 0 and 2",
            "i_json_no_schema.yaml: line 5: output.parser json needs 'output.schema'",
            "j_format.yaml: line 1: built for code-skill format 2, but this Clausewright loads "
            "code-skill format 1" };
        for (int i = 0; i < expected.size(); ++i)
            QVERIFY2(errors[i].contains(expected[i]), qPrintable(errors[i] + " / " + expected[i]));
        QVERIFY(host.skill("my-skill"));
        QVERIFY(host.skill("python-pytest")); // the built-in ones still load
    }

    void userSkillReplacesBuiltIn()
    {
        QTemporaryDir dir;
        writeFile(dir.filePath("mine.yaml"),
            "name: explain-code\ntitle: Explain (mine)\nlanguages: [python]\nsystem: s\n"
            "user: \"{code}\"\noutput: {parser: text}\n");
        CodeSkillHost host({ dir.path() });
        QCOMPARE(host.skill("explain-code")->title, QString("Explain (mine)"));
        QCOMPARE(host.skills().size(), qsizetype(kShipped.size()));
    }
};

QTEST_GUILESS_MAIN(CodeSkillsTest)
#include "code_skills_test.moc"
