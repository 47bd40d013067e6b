#include "app/playbook/playbook.h"

#include "app/heads/cuad_dataset.h"
#include "app/review/review_summary.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSet>
#include <yaml-cpp/yaml.h>

namespace cw {

namespace {

std::optional<Risk> riskFrom(const std::string& name)
{
    if (name == "low")
        return Risk::Low;
    if (name == "medium")
        return Risk::Medium;
    if (name == "high")
        return Risk::High;
    if (name == "none")
        return Risk::None;
    return std::nullopt;
}

} // namespace

Result<Playbook> parsePlaybook(const QByteArray& yaml, const QString& name)
{
    const std::string file = name.toStdString();
    YAML::Node root;
    try {
        root = YAML::Load(yaml.toStdString());
    } catch (const YAML::Exception& e) {
        return makeError(file + ": not valid YAML/JSON at line " + std::to_string(e.mark.line + 1)
            + ": " + e.msg);
    }
    if (!root.IsMap())
        return makeError(file + ": the playbook must be a mapping with 'name' and 'rules'");
    Playbook book;
    book.path = name;
    try {
        if (!root["name"] || !root["name"].IsScalar())
            return makeError(file + ": field 'name' is missing or not text");
        book.name = QString::fromStdString(root["name"].as<std::string>());
        const QStringList& categories = heads::cuadCategories();
        if (root["default_risk"]) {
            const auto r = riskFrom(root["default_risk"].as<std::string>());
            if (!r)
                return makeError(file + ": field 'default_risk' must be none, low, medium or high");
            book.defaultRisk = *r;
        }
        if (root["expected"]) {
            if (!root["expected"].IsSequence())
                return makeError(file + ": field 'expected' must be a list of category names");
            for (const auto& item : root["expected"]) {
                const QString c = QString::fromStdString(item.as<std::string>());
                if (!categories.contains(c))
                    return makeError(file + ": 'expected' names unknown category '"
                        + c.toStdString() + "' (use the exact CUAD name)");
                book.expected.append(c);
            }
        }
        const YAML::Node rules = root["rules"];
        if (!rules || !rules.IsSequence())
            return makeError(file + ": field 'rules' is missing or not a list");
        QSet<QString> ids;
        int number = 0;
        for (const auto& node : rules) {
            ++number;
            std::string where = file + ": rule " + std::to_string(number);
            if (!node.IsMap())
                return makeError(where + ": must be a mapping");
            PlaybookRule rule;
            if (!node["id"] || !node["id"].IsScalar())
                return makeError(where + ": field 'id' is missing");
            rule.id = QString::fromStdString(node["id"].as<std::string>());
            where += " (" + rule.id.toStdString() + ")";
            if (ids.contains(rule.id))
                return makeError(where + ": field 'id' repeats an earlier rule's id");
            ids.insert(rule.id);
            if (!node["category"] || !node["category"].IsScalar())
                return makeError(where + ": field 'category' is missing");
            rule.category = QString::fromStdString(node["category"].as<std::string>());
            if (!categories.contains(rule.category))
                return makeError(where + ": field 'category': unknown category '"
                    + rule.category.toStdString() + "' (use the exact CUAD name)");
            const std::string check = node["check"] ? node["check"].as<std::string>() : "flag";
            if (check == "flag")
                rule.check = PlaybookRule::Check::Flag;
            else if (check == "max_field")
                rule.check = PlaybookRule::Check::MaxField;
            else if (check == "min_field")
                rule.check = PlaybookRule::Check::MinField;
            else if (check == "one_of")
                rule.check = PlaybookRule::Check::OneOf;
            else
                return makeError(where
                    + ": field 'check' must be flag, max_field, min_field or one_of, not '" + check
                    + "'");
            if (rule.check != PlaybookRule::Check::Flag) {
                if (!node["field"] || !node["field"].IsScalar())
                    return makeError(
                        where + ": field 'field' is required for check '" + check + "'");
                rule.field = QString::fromStdString(node["field"].as<std::string>());
            }
            if (rule.check == PlaybookRule::Check::MaxField
                || rule.check == PlaybookRule::Check::MinField) {
                const char* key = rule.check == PlaybookRule::Check::MaxField ? "max" : "min";
                if (!node[key])
                    return makeError(
                        where + ": field '" + key + "' is required for check '" + check + "'");
                try {
                    rule.limit = node[key].as<double>();
                } catch (const YAML::Exception&) {
                    return makeError(where + ": field '" + key + "' must be a number");
                }
            }
            if (rule.check == PlaybookRule::Check::OneOf) {
                if (!node["values"] || !node["values"].IsSequence() || node["values"].size() == 0)
                    return makeError(
                        where + ": field 'values' must be a non-empty list for check 'one_of'");
                for (const auto& v : node["values"])
                    rule.values.append(QString::fromStdString(v.as<std::string>()));
            }
            if (!node["risk"])
                return makeError(where + ": field 'risk' is missing");
            const auto risk = riskFrom(node["risk"].as<std::string>());
            if (!risk || *risk == Risk::None)
                return makeError(where + ": field 'risk' must be low, medium or high");
            rule.risk = *risk;
            if (!node["message"] || !node["message"].IsScalar())
                return makeError(where + ": field 'message' is missing");
            rule.message = QString::fromStdString(node["message"].as<std::string>());
            for (const auto& [key, text] : { std::pair { "preferred_text", &rule.preferredText },
                     std::pair { "fallback_text", &rule.fallbackText } }) {
                if (!node[key])
                    continue;
                if (!node[key].IsScalar())
                    return makeError(where + ": field '" + key + "' must be text");
                *text = QString::fromStdString(node[key].as<std::string>()).trimmed();
                if (text->isEmpty())
                    return makeError(where + ": field '" + key + "' is empty; leave it out");
            }
            book.rules.append(rule);
        }
    } catch (const YAML::Exception& e) {
        return makeError(file + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    return book;
}

Result<Playbook> loadPlaybook(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(path.toStdString() + ": cannot open the playbook ("
            + file.errorString().toStdString() + ")");
    if (file.size() > 4 * 1024 * 1024)
        return makeError(path.toStdString() + ": playbook larger than 4 MiB");
    return parsePlaybook(file.readAll(), path);
}

QString defaultPlaybookPath()
{
    QStringList candidates;
    if (QCoreApplication::instance())
        candidates.append(QDir(QCoreApplication::applicationDirPath())
                              .filePath("../share/clausewright/playbooks/default.yaml"));
#ifdef CW_RESOURCE_DIR
    candidates.append(QStringLiteral(CW_RESOURCE_DIR "/playbooks/default.yaml"));
#endif
    for (const QString& c : candidates) {
        if (QFile::exists(c))
            return QDir::cleanPath(c);
    }
    return candidates.isEmpty() ? QString() : candidates.back();
}

namespace {

bool fires(const PlaybookRule& rule, const Finding& f)
{
    switch (rule.check) {
    case PlaybookRule::Check::Flag:
        return true;
    case PlaybookRule::Check::MaxField:
        return f.fields.contains(rule.field) && f.fields.value(rule.field).toDouble() > rule.limit;
    case PlaybookRule::Check::MinField:
        return f.fields.contains(rule.field) && f.fields.value(rule.field).toDouble() < rule.limit;
    case PlaybookRule::Check::OneOf: {
        if (!f.fields.contains(rule.field))
            return false;
        // Every value the finding holds: the field (a value or a list) and, where the finding
        // also has the list of the plural name ("law" and "laws": a clause that chooses
        // several laws), each of those. One value outside the list fires the rule.
        QStringList held;
        auto take = [&held](const QJsonValue& v) {
            if (v.isArray())
                for (const QJsonValue& e : v.toArray())
                    held.append(e.toString());
            else
                held.append(v.toString());
        };
        take(f.fields.value(rule.field));
        if (f.fields.value(rule.field + QLatin1Char('s')).isArray())
            take(f.fields.value(rule.field + QLatin1Char('s')));
        for (const QString& v : held) {
            bool allowed = false;
            for (const QString& a : rule.values)
                allowed = allowed || v.compare(a, Qt::CaseInsensitive) == 0;
            if (!allowed)
                return true;
        }
        return false;
    }
    }
    return false;
}

} // namespace

void applyPlaybook(const Playbook& playbook, Review& review)
{
    ReviewSummary summary;
    QSet<QString> found;
    for (Finding& f : review.findings) {
        found.insert(f.category);
        const PlaybookRule* chosen = nullptr;
        for (const PlaybookRule& rule : playbook.rules) {
            if (rule.category == f.category && fires(rule, f)
                && (!chosen || rule.risk > chosen->risk))
                chosen = &rule;
        }
        if (chosen) {
            f.risk = chosen->risk;
            f.ruleId = chosen->id;
            f.rationale
                = chosen->message + (f.rationale.isEmpty() ? QString() : " (" + f.rationale + ")");
        } else if (heads::cuadCategories().contains(f.category)) {
            f.risk = playbook.defaultRisk;
        }
        summary.high += f.risk == Risk::High;
        summary.medium += f.risk == Risk::Medium;
        summary.low += f.risk == Risk::Low;
    }
    for (const QString& c : playbook.expected) {
        if (!found.contains(c))
            summary.missingCategories.append(c);
    }
    review.playbookName = playbook.name;
    summary.text = summarySentence(review, summary);
    review.summary = summary;
}

} // namespace cw
