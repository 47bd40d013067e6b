#include "app/llm_review/category_questions.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace cw::llm {

namespace {

Result<ModelField> fieldFrom(const QJsonValue& value, const std::string& where)
{
    const QJsonObject o = value.toObject();
    ModelField f { o.value("name").toString(), o.value("type").toString(),
        o.value("meaning").toString() };
    if (f.name.isEmpty())
        return makeError(where + ": a field has no 'name'");
    if (f.type != "integer" && f.type != "number" && f.type != "string")
        return makeError(where + ": field '" + f.name.toStdString()
            + "': 'type' must be integer, number or string");
    return f;
}

Result<CategoryQuestion> categoryFrom(const QJsonValue& value, const std::string& where)
{
    const QJsonObject o = value.toObject();
    CategoryQuestion c;
    c.category = o.value("category").toString();
    c.meaning = o.value("meaning").toString();
    if (c.category.isEmpty() || c.meaning.isEmpty())
        return makeError(where + ": a category needs 'category' and 'meaning'");
    const std::string here = where + ", category '" + c.category.toStdString() + "'";
    if (!o.value("keywords").isArray())
        return makeError(here + ": 'keywords' must be an array of strings");
    for (const QJsonValue& k : o.value("keywords").toArray())
        c.keywords.append(k.toString().toLower());
    for (const QJsonValue& f : o.value("fields").toArray()) {
        auto field = fieldFrom(f, here);
        if (!field)
            return field.error();
        c.fields.append(*field);
    }
    return c;
}

} // namespace

Result<QList<CategoryGroup>> parseCategoryGroups(const QByteArray& json, const QString& where)
{
    const std::string w = where.toStdString();
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return makeError(w + ": not a JSON object (" + error.errorString().toStdString() + ")");
    const QJsonObject root = doc.object();
    if (const int format = root.value("format").toInt(); format != kQuestionsFormat)
        return makeError(w + ": questions format " + std::to_string(format)
            + ", this version reads format " + std::to_string(kQuestionsFormat));
    QList<CategoryGroup> groups;
    QSet<QString> seen;
    for (const QJsonValue& g : root.value("groups").toArray()) {
        CategoryGroup group;
        group.id = g.toObject().value("id").toString();
        if (group.id.isEmpty())
            return makeError(w + ": a group has no 'id'");
        const std::string here = w + ": group '" + group.id.toStdString() + "'";
        for (const QJsonValue& c : g.toObject().value("categories").toArray()) {
            auto category = categoryFrom(c, here);
            if (!category)
                return category.error();
            if (seen.contains(category->category))
                return makeError(here + ": category '" + category->category.toStdString()
                    + "' is already in another group");
            seen.insert(category->category);
            group.categories.append(*category);
        }
        if (group.categories.isEmpty())
            return makeError(here + ": no categories");
        groups.append(group);
    }
    if (groups.isEmpty())
        return makeError(w + ": no 'groups'");
    return groups;
}

Result<QList<CategoryGroup>> readCategoryGroups(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(
            path.toStdString() + ": cannot read (" + file.errorString().toStdString() + ")");
    return parseCategoryGroups(file.readAll(), path);
}

} // namespace cw::llm
