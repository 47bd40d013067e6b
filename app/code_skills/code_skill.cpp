#include "app/code_skills/code_skill.h"

#include "app/code_skills/skill_template.h"
#include "app/plugins/plugin_folders.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <yaml-cpp/yaml.h>

namespace cw {

namespace {

const QStringList kLanguages = { "python", "cpp", "javascript", "typescript", "go", "text" };

const QSet<QString> kFields = { "format", "name", "title", "version", "languages", "description",
    "frameworks", "system", "user", "repair", "stop", "sampling", "output", "runnable_tests" };

// A problem found while reading the file: the line it is on and what is wrong.
struct SkillFileError {
    int line = 0;
    std::string message;
};

int lineOf(const YAML::Node& node)
{
    return node.Mark().is_null() ? 0 : node.Mark().line + 1;
}

[[noreturn]] void fail(const YAML::Node& node, const std::string& message)
{
    throw SkillFileError { lineOf(node), message };
}

QString scalar(const YAML::Node& node, const std::string& field)
{
    if (!node.IsScalar())
        fail(node, "field '" + field + "' must be text");
    return QString::fromStdString(node.as<std::string>());
}

QStringList textList(const YAML::Node& node, const std::string& field)
{
    if (!node.IsSequence())
        fail(node, "field '" + field + "' must be a list");
    QStringList out;
    for (const YAML::Node& item : node)
        out.append(scalar(item, field + "[]"));
    return out;
}

double number(const YAML::Node& node, const std::string& field, double low, double high)
{
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value))
        fail(node, "field '" + field + "' must be a number");
    if (value < low || value > high)
        fail(node,
            "field '" + field + "' must be between " + QString::number(low).toStdString() + " and "
                + QString::number(high).toStdString());
    return value;
}

// YAML (a mapping or a list) to JSON text, for the output schema.
QJsonValue toJson(const YAML::Node& node)
{
    if (node.IsMap()) {
        QJsonObject object;
        for (const auto& kv : node)
            object.insert(QString::fromStdString(kv.first.as<std::string>()), toJson(kv.second));
        return object;
    }
    if (node.IsSequence()) {
        QJsonArray array;
        for (const YAML::Node& item : node)
            array.append(toJson(item));
        return array;
    }
    if (node.IsNull())
        return QJsonValue::Null;
    const std::string text = node.as<std::string>();
    if (node.Tag() != "!") { // plain (unquoted) scalars may be numbers or booleans
        if (text == "true" || text == "false")
            return text == "true";
        bool isNumber = false;
        const double value = QString::fromStdString(text).toDouble(&isNumber);
        if (isNumber)
            return value;
    }
    return QString::fromStdString(text);
}

void checkTemplate(const YAML::Node& node, const std::string& field)
{
    if (auto problem = checkSkillTemplate(scalar(node, field)); !problem)
        fail(node, "field '" + field + "': " + problem.error().message);
}

void readSampling(const YAML::Node& node, SkillSampling& out)
{
    if (!node.IsMap())
        fail(node, "field 'sampling' must be a mapping (temperature, top_p, top_k, max_tokens)");
    for (const auto& kv : node) {
        const std::string key = kv.first.as<std::string>();
        if (key == "temperature")
            out.temperature = float(number(kv.second, "sampling.temperature", 0, 2));
        else if (key == "top_p")
            out.topP = float(number(kv.second, "sampling.top_p", 0, 1));
        else if (key == "top_k")
            out.topK = int(number(kv.second, "sampling.top_k", 0, 1000));
        else if (key == "max_tokens")
            out.maxTokens = int(number(kv.second, "sampling.max_tokens", 1, 65536));
        else
            fail(kv.first, "unknown field 'sampling." + key + "'");
    }
}

void readOutput(const YAML::Node& node, CodeSkill& skill)
{
    if (!node.IsMap())
        fail(node, "field 'output' must be a mapping with 'parser'");
    if (!node["parser"])
        fail(node, "field 'output.parser' is missing (fenced_code, json or text)");
    const QString parser = scalar(node["parser"], "output.parser");
    if (parser == "fenced_code")
        skill.output = SkillOutputKind::FencedCode;
    else if (parser == "json")
        skill.output = SkillOutputKind::Json;
    else if (parser == "text")
        skill.output = SkillOutputKind::PlainText;
    else
        fail(node["parser"],
            "field 'output.parser' must be fenced_code, json or text, not '" + parser.toStdString()
                + "'");
    for (const auto& kv : node) {
        const std::string key = kv.first.as<std::string>();
        if (key == "parser")
            continue;
        if (key == "fence_language")
            skill.fenceLanguage = scalar(kv.second, "output.fence_language");
        else if (key == "schema") {
            if (!kv.second.IsMap())
                fail(kv.second, "field 'output.schema' must be a JSON schema object");
            skill.jsonSchema = QJsonDocument(toJson(kv.second).toObject()).toJson();
        } else
            fail(kv.first, "unknown field 'output." + key + "'");
    }
    if (skill.output == SkillOutputKind::Json && skill.jsonSchema.isEmpty())
        fail(node, "output.parser json needs 'output.schema'");
}

CodeSkill readSkill(const YAML::Node& root)
{
    if (!root.IsMap())
        fail(root, "a skill file must be a mapping with name, languages, system and user");
    for (const auto& kv : root) {
        const std::string key = kv.first.as<std::string>();
        if (!kFields.contains(QString::fromStdString(key)))
            fail(kv.first, "unknown field '" + key + "'");
    }
    if (root["format"]) {
        const int format = int(number(root["format"], "format", 1, 1000000));
        if (format != kCodeSkillFormat)
            fail(root["format"],
                versionMismatchMessage(QStringLiteral("code-skill format"), QString::number(format),
                    QString::number(kCodeSkillFormat))
                    .toStdString());
    }
    for (const char* required : { "name", "languages", "system", "user", "output" }) {
        if (!root[required])
            fail(root, std::string("field '") + required + "' is missing");
    }
    CodeSkill skill;
    skill.name = scalar(root["name"], "name");
    static const QRegularExpression kName(QStringLiteral("^[a-z0-9][a-z0-9_.-]{0,63}$"));
    if (!kName.match(skill.name).hasMatch())
        fail(root["name"], "field 'name' must be lower-case letters, digits, '-', '_' or '.'");
    skill.title = root["title"] ? scalar(root["title"], "title") : skill.name;
    if (root["version"])
        skill.version = int(number(root["version"], "version", 1, 1000000));
    skill.languages = textList(root["languages"], "languages");
    if (skill.languages.isEmpty())
        fail(root["languages"], "field 'languages' must name at least one language");
    for (const QString& language : skill.languages) {
        if (!kLanguages.contains(language))
            fail(root["languages"],
                "unknown language '" + language.toStdString()
                    + "' (known: " + kLanguages.join(", ").toStdString() + ")");
    }
    if (root["description"])
        skill.description = scalar(root["description"], "description").trimmed();
    if (root["frameworks"]) {
        if (!root["frameworks"].IsMap())
            fail(root["frameworks"], "field 'frameworks' must map a language to its framework");
        for (const auto& kv : root["frameworks"])
            skill.frameworks.insert(QString::fromStdString(kv.first.as<std::string>()),
                scalar(kv.second, "frameworks"));
    }
    checkTemplate(root["system"], "system");
    checkTemplate(root["user"], "user");
    skill.systemTemplate = scalar(root["system"], "system");
    skill.userTemplate = scalar(root["user"], "user");
    if (root["repair"]) {
        checkTemplate(root["repair"], "repair");
        skill.repairTemplate = scalar(root["repair"], "repair");
    }
    if (root["stop"])
        skill.stopSequences = textList(root["stop"], "stop");
    if (root["sampling"])
        readSampling(root["sampling"], skill.sampling);
    readOutput(root["output"], skill);
    if (root["runnable_tests"]) {
        bool runnable = false;
        if (!YAML::convert<bool>::decode(root["runnable_tests"], runnable))
            fail(root["runnable_tests"], "field 'runnable_tests' must be true or false");
        skill.runnableTests = runnable;
    }
    if (skill.runnableTests && skill.output != SkillOutputKind::FencedCode)
        fail(root["runnable_tests"], "runnable tests must be read with output.parser fenced_code");
    return skill;
}

} // namespace

const QStringList& skillPlaceholders()
{
    static const QStringList kPlaceholders = { "code", "language", "framework", "file_name",
        "module_name", "existing_tests", "errors", "uncovered_lines" };
    return kPlaceholders;
}

Result<CodeSkill> parseCodeSkill(const QByteArray& text, const QString& fileName)
{
    const std::string file = fileName.toStdString();
    if (text.contains('\0'))
        return makeError(file + ": a skill file must be text (found a NUL byte)");
    try {
        const YAML::Node root = YAML::Load(text.toStdString());
        CodeSkill skill = readSkill(root);
        skill.sourcePath = fileName;
        return skill;
    } catch (const SkillFileError& e) {
        return makeError(file + ": line " + std::to_string(e.line) + ": " + e.message);
    } catch (const YAML::Exception& e) {
        return makeError(file + ": line " + std::to_string(e.mark.line + 1)
            + ": not valid YAML or JSON: " + e.msg);
    }
}

} // namespace cw
