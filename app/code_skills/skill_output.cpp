#include "app/code_skills/skill_output.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace cw {

namespace {

// Fence info strings that mean the same language.
QString canonicalFence(const QString& info)
{
    const QString word = info.trimmed().section(' ', 0, 0).toLower();
    if (word == "py" || word == "python3")
        return QStringLiteral("python");
    if (word == "c++" || word == "cc" || word == "cxx" || word == "hpp")
        return QStringLiteral("cpp");
    if (word == "js" || word == "node" || word == "mjs")
        return QStringLiteral("javascript");
    if (word == "ts")
        return QStringLiteral("typescript");
    if (word == "golang")
        return QStringLiteral("go");
    return word;
}

struct FencedBlock {
    QString info;
    QString body;
    bool closed = false;
};

QList<FencedBlock> fencedBlocks(const QString& text)
{
    QList<FencedBlock> blocks;
    const QStringList lines = text.split('\n');
    FencedBlock* open = nullptr;
    QString fence;
    for (const QString& line : lines) {
        const QString trimmed = line.trimmed();
        if (!open) {
            if (trimmed.startsWith(QLatin1String("```"))
                || trimmed.startsWith(QLatin1String("~~~"))) {
                qsizetype n = 0;
                while (n < trimmed.size() && trimmed[n] == trimmed[0])
                    ++n;
                fence = trimmed.left(n);
                blocks.append({ trimmed.mid(n), {}, false });
                open = &blocks.last();
            }
            continue;
        }
        if (trimmed.startsWith(fence) && trimmed.mid(fence.size()).trimmed().isEmpty()) {
            open->closed = true;
            open = nullptr;
            continue;
        }
        open->body += line + '\n';
    }
    return blocks;
}

Result<SkillAnswer> readFenced(const CodeSkill& skill, SkillAnswer answer)
{
    const QList<FencedBlock> blocks = fencedBlocks(answer.text);
    if (blocks.isEmpty())
        return makeError("the answer has no ``` code block");
    const FencedBlock* chosen = &blocks.first();
    const QString wanted = canonicalFence(skill.fenceLanguage);
    if (!wanted.isEmpty()) {
        for (const FencedBlock& b : blocks) {
            if (canonicalFence(b.info) == wanted) {
                chosen = &b;
                break;
            }
        }
    }
    if (!chosen->closed)
        return makeError("the answer's code block is not closed (the answer was cut off)");
    if (chosen->body.trimmed().isEmpty())
        return makeError("the answer's code block is empty");
    answer.code = chosen->body;
    return answer;
}

Result<SkillAnswer> readJson(const CodeSkill& skill, SkillAnswer answer)
{
    QString text = answer.text;
    const QList<FencedBlock> blocks = fencedBlocks(text);
    if (!blocks.isEmpty() && blocks.first().closed)
        text = blocks.first().body;
    const qsizetype start = text.indexOf('{');
    const qsizetype end = text.lastIndexOf('}');
    if (start < 0 || end < start)
        return makeError("the answer has no JSON object");
    QJsonParseError error;
    const QJsonDocument doc
        = QJsonDocument::fromJson(text.mid(start, end - start + 1).toUtf8(), &error);
    if (!doc.isObject())
        return makeError("the answer is not a JSON object: " + error.errorString().toStdString());
    answer.json = doc.object();
    const QJsonObject schema = QJsonDocument::fromJson(skill.jsonSchema).object();
    for (const QJsonValue& key : schema.value("required").toArray()) {
        if (!answer.json.contains(key.toString()))
            return makeError("the answer's JSON has no '" + key.toString().toStdString() + "'");
    }
    return answer;
}

} // namespace

QString withoutThinking(const QString& answer)
{
    QString text = answer;
    const qsizetype open = text.indexOf(QLatin1String("<think>"));
    const qsizetype close = text.indexOf(QLatin1String("</think>"));
    if (close >= 0 && (open < 0 || open < close))
        text = text.mid(close + int(qstrlen("</think>")));
    else if (open >= 0 && close < 0)
        text = text.left(open); // still thinking when it stopped: no answer yet
    return text.trimmed();
}

Result<SkillAnswer> parseSkillOutput(const CodeSkill& skill, const QString& answer)
{
    SkillAnswer out;
    out.text = withoutThinking(answer);
    switch (skill.output) {
    case SkillOutputKind::FencedCode:
        return readFenced(skill, std::move(out));
    case SkillOutputKind::Json:
        return readJson(skill, std::move(out));
    case SkillOutputKind::PlainText:
        if (out.text.isEmpty())
            return makeError("the answer is empty");
        return out;
    }
    return out;
}

} // namespace cw
