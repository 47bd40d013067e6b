#include "app/code_skills/skill_template.h"

#include "app/code_skills/code_skill.h"

#include <QList>

namespace cw {

namespace {

// One piece of a template: literal text, a placeholder, or the start or end of a section.
struct TemplatePart {
    enum Kind { Text, Value, Open, Close } kind = Text;
    QString text; // literal text or the placeholder's name
};

Result<QList<TemplatePart>> split(const QString& text)
{
    QList<TemplatePart> parts;
    QString literal;
    auto flush = [&] {
        if (!literal.isEmpty())
            parts.append({ TemplatePart::Text, literal });
        literal.clear();
    };
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c == '}') {
            if (i + 1 < text.size() && text[i + 1] == '}') {
                literal += '}';
                ++i;
                continue;
            }
            return makeError("a '}' without its '{' at character " + std::to_string(i + 1)
                + " (write '}}' for a literal brace)");
        }
        if (c != '{') {
            literal += c;
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '{') {
            literal += '{';
            ++i;
            continue;
        }
        const qsizetype end = text.indexOf('}', i);
        if (end < 0)
            return makeError("a '{' without its '}' at character " + std::to_string(i + 1)
                + " (write '{{' for a literal brace)");
        QString name = text.mid(i + 1, end - i - 1);
        TemplatePart::Kind kind = TemplatePart::Value;
        if (name.startsWith('#') || name.startsWith('/')) {
            kind = name.startsWith('#') ? TemplatePart::Open : TemplatePart::Close;
            name = name.mid(1);
        }
        if (!skillPlaceholders().contains(name))
            return makeError("unknown placeholder '{" + text.mid(i + 1, end - i - 1).toStdString()
                + "}' (known: " + skillPlaceholders().join(", ").toStdString() + ")");
        flush();
        parts.append({ kind, name });
        i = end;
    }
    flush();
    return parts;
}

} // namespace

Result<void> checkSkillTemplate(const QString& text)
{
    auto parts = split(text);
    if (!parts)
        return parts.error();
    QStringList open;
    for (const TemplatePart& p : *parts) {
        if (p.kind == TemplatePart::Open)
            open.append(p.text);
        if (p.kind == TemplatePart::Close) {
            if (open.isEmpty() || open.last() != p.text)
                return makeError("'{/" + p.text.toStdString() + "}' closes no open section");
            open.removeLast();
        }
    }
    if (!open.isEmpty())
        return makeError("section '{#" + open.last().toStdString() + "}' is not closed");
    return {};
}

QString renderSkillTemplate(const QString& text, const SkillValues& values)
{
    auto parts = split(text);
    if (!parts)
        return text; // templates are checked when the skill is loaded
    QString out;
    int skipping = 0; // depth of sections being left out
    for (const TemplatePart& p : *parts) {
        switch (p.kind) {
        case TemplatePart::Open:
            if (skipping > 0 || values.value(p.text).trimmed().isEmpty())
                ++skipping;
            break;
        case TemplatePart::Close:
            if (skipping > 0)
                --skipping;
            break;
        case TemplatePart::Value:
            if (skipping == 0)
                out += values.value(p.text);
            break;
        case TemplatePart::Text:
            if (skipping == 0)
                out += p.text;
            break;
        }
    }
    return out;
}

} // namespace cw
