#include "app/llm_review/question_prompt.h"

#include <QJsonArray>
#include <QJsonDocument>
// The schema is built with nlohmann's ordered_json, not QJsonObject: the grammar emits
// properties in schema order, and the note must come first to stream before the verdicts;
// QJsonObject sorts its keys.
#include <nlohmann/json.hpp>

namespace cw::llm {

namespace {

constexpr int kFieldStringMaxChars = 60;
constexpr const char* kWordingField = "suggested_text";

QString riskWord(Risk risk)
{
    return riskName(risk);
}

QString positionText(const PlaybookRule& rule)
{
    QString when;
    switch (rule.check) {
    case PlaybookRule::Check::Flag:
        when = QStringLiteral("whenever present");
        break;
    case PlaybookRule::Check::MaxField:
        when = QStringLiteral("when %1 is above %2").arg(rule.field).arg(rule.limit);
        break;
    case PlaybookRule::Check::MinField:
        when = QStringLiteral("when %1 is below %2").arg(rule.field).arg(rule.limit);
        break;
    case PlaybookRule::Check::OneOf:
        when = QStringLiteral("when %1 is not one of: %2").arg(rule.field, rule.values.join(", "));
        break;
    }
    return QStringLiteral("%1 (%2 risk %3)").arg(rule.message, riskWord(rule.risk), when);
}

QString passagesText(const Document& document, const QuestionPlan& plan)
{
    QString out;
    for (const Passage& p : plan.passages) {
        out += QStringLiteral("[%1]").arg(p.id);
        QStringList where;
        if (!p.label.isEmpty())
            where.append(p.label);
        if (p.page > 0)
            where.append(QStringLiteral("page %1").arg(p.page));
        if (!where.isEmpty())
            out += QStringLiteral(" (%1)").arg(where.join(", "));
        out += QLatin1Char(' ') + document.text.mid(p.start, p.end - p.start).simplified()
            + QStringLiteral("\n");
    }
    return out;
}

QString questionText(const ModelQuestion& question, const Playbook& playbook)
{
    QStringList ids;
    for (int id : question.passageIds)
        ids.append(QStringLiteral("[%1]").arg(id));
    QString out = QStringLiteral("Question: for each category below, is there such a clause in "
                                 "the contract? Look at passages %1 first.\n")
                      .arg(ids.join(", "));
    for (const CategoryQuestion& c : question.categories) {
        out += QStringLiteral("- %1: %2.").arg(c.category, c.meaning);
        for (const ModelField& f : c.fields)
            out += QStringLiteral(" Field %1: %2.").arg(f.name, f.meaning);
        QStringList positions;
        for (const PlaybookRule& rule : playbook.rules) {
            if (rule.category == c.category)
                positions.append(positionText(rule));
        }
        if (!positions.isEmpty())
            out += QStringLiteral(" Firm's position: %1.").arg(positions.join("; "));
        out += QLatin1Char('\n');
    }
    out += QStringLiteral(
        "Answer in JSON: first \"rationale\", one or two sentences for the lawyer on what the "
        "passages say and how they stand against the firm's position; then under \"answers\", "
        "for each category, \"present\", \"clause_ids\" (the passage numbers holding it), "
        "\"risk\" (low, medium or high against the firm's position) and the fields asked for.");
    if (!question.wordingCategories.isEmpty())
        out += QStringLiteral(
            " Where a clause of %1 is of medium or high risk, add \"%2\": the wording the "
            "lawyer should propose in place of that clause's text (at most %3 characters); "
            "leave it out otherwise.")
                   .arg(question.wordingCategories.join(", "), kWordingField)
                   .arg(kSuggestedTextMaxChars);
    return out;
}

nlohmann::ordered_json fieldSchema(const ModelField& field)
{
    if (field.type == QLatin1String("string"))
        return { { "type", "string" }, { "maxLength", kFieldStringMaxChars } };
    return { { "type", field.type.toStdString() } };
}

} // namespace

void markWordingCategories(QuestionPlan& plan, const Playbook& playbook)
{
    for (ModelQuestion& question : plan.questions) {
        question.wordingCategories.clear();
        for (const CategoryQuestion& c : question.categories) {
            bool hasWording = false;
            for (const PlaybookRule& rule : playbook.rules)
                hasWording = hasWording
                    || (rule.category == c.category
                        && !(rule.preferredText.isEmpty() && rule.fallbackText.isEmpty()));
            if (!hasWording)
                question.wordingCategories.append(c.category);
        }
    }
}

std::vector<engine::ChatMessage> questionMessages(const Document& document,
    const QuestionPlan& plan, const ModelQuestion& question, const Playbook& playbook)
{
    const QString title = document.title.isEmpty() ? QStringLiteral("(untitled)") : document.title;
    const QString user
        = QStringLiteral("Contract: %1\n\nPassages:\n%2\n%3")
              .arg(title, passagesText(document, plan), questionText(question, playbook));
    return {
        { "system",
            "You review commercial contracts for a lawyer. Answer only from the numbered "
            "passages, in the JSON format asked for.",
            std::nullopt },
        { "user", user.toStdString(), std::nullopt },
    };
}

std::string answerSchema(const ModelQuestion& question)
{
    nlohmann::ordered_json ids = nlohmann::ordered_json::array();
    for (int id : question.passageIds)
        ids.push_back(id);
    nlohmann::ordered_json answers
        = { { "type", "object" }, { "properties", nlohmann::ordered_json::object() },
              { "required", nlohmann::ordered_json::array() } };
    for (const CategoryQuestion& c : question.categories) {
        nlohmann::ordered_json verdict = { { "type", "object" },
            { "properties",
                { { "present", { { "type", "boolean" } } },
                    { "clause_ids",
                        { { "type", "array" }, { "items", { { "enum", ids } } },
                            { "maxItems", ids.size() } } },
                    { "risk",
                        { { "enum",
                            nlohmann::ordered_json::array({ "low", "medium", "high" }) } } } } },
            { "required", nlohmann::ordered_json::array({ "present", "clause_ids", "risk" }) } };
        if (!c.fields.isEmpty()) {
            nlohmann::ordered_json fields
                = { { "type", "object" }, { "properties", nlohmann::ordered_json::object() } };
            for (const ModelField& f : c.fields)
                fields["properties"][f.name.toStdString()] = fieldSchema(f);
            verdict["properties"]["fields"] = fields;
        }
        if (question.wordingCategories.contains(c.category))
            verdict["properties"][kWordingField]
                = { { "type", "string" }, { "maxLength", kSuggestedTextMaxChars } };
        answers["properties"][c.category.toStdString()] = verdict;
        answers["required"].push_back(c.category.toStdString());
    }
    const nlohmann::ordered_json schema = { { "type", "object" },
        { "properties",
            { { kNoteField,
                  { { "type", "string" }, { "minLength", 1 }, { "maxLength", kNoteMaxChars } } },
                { "answers", answers } } },
        { "required", nlohmann::ordered_json::array({ kNoteField, "answers" }) } };
    return schema.dump();
}

Result<QuestionAnswer> parseAnswer(const ModelQuestion& question, const std::string& text)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return makeError("the answer is not a JSON object (" + error.errorString().toStdString()
            + " at byte " + std::to_string(error.offset) + ")");
    const QJsonObject root = doc.object();
    QuestionAnswer answer;
    answer.questionId = question.id;
    answer.note = root.value(kNoteField).toString();
    const QJsonObject answers = root.value("answers").toObject();
    for (const CategoryQuestion& c : question.categories) {
        if (!answers.contains(c.category))
            return makeError("the answer has no verdict on '" + c.category.toStdString() + "'");
        const QJsonObject v = answers.value(c.category).toObject();
        CategoryVerdict verdict;
        verdict.category = c.category;
        verdict.present = v.value("present").toBool();
        for (const QJsonValue& id : v.value("clause_ids").toArray()) {
            const int passage = id.toInt();
            if (question.passageIds.contains(passage) && !verdict.passageIds.contains(passage))
                verdict.passageIds.append(passage);
        }
        verdict.risk = riskFromName(v.value("risk").toString());
        verdict.fields = v.value("fields").toObject();
        if (question.wordingCategories.contains(c.category))
            verdict.suggestedText = v.value(kWordingField).toString().trimmed();
        answer.verdicts.append(verdict);
    }
    answer.answered = true;
    return answer;
}

} // namespace cw::llm
