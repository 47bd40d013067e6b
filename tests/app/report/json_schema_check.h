#pragma once

// A small JSON Schema checker for the keywords review.schema.json uses: type (one or a list),
// required, properties, additionalProperties (schema), items, enum, const, minimum, maximum
// and local $ref ("#/$defs/name"). Returns the problems found, each naming the JSON path.
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>

namespace cw::testing {

class JsonSchemaCheck {
public:
    explicit JsonSchemaCheck(QJsonObject root)
        : m_root(std::move(root))
    {
    }

    QStringList check(const QJsonValue& value) const
    {
        QStringList problems;
        checkValue(value, m_root, QStringLiteral("$"), problems);
        return problems;
    }

private:
    static bool hasType(const QJsonValue& value, const QString& type)
    {
        if (type == QLatin1String("object"))
            return value.isObject();
        if (type == QLatin1String("array"))
            return value.isArray();
        if (type == QLatin1String("string"))
            return value.isString();
        if (type == QLatin1String("boolean"))
            return value.isBool();
        if (type == QLatin1String("null"))
            return value.isNull();
        if (type == QLatin1String("number"))
            return value.isDouble();
        if (type == QLatin1String("integer"))
            return value.isDouble() && value.toDouble() == double(value.toInteger());
        return false;
    }

    void checkValue(const QJsonValue& value, QJsonObject schema, const QString& path,
        QStringList& problems) const
    {
        if (schema.contains(QLatin1String("$ref"))) {
            const QString ref = schema.value(QLatin1String("$ref")).toString();
            const QString name = ref.section(QLatin1Char('/'), -1);
            schema = m_root.value(QLatin1String("$defs")).toObject().value(name).toObject();
            if (schema.isEmpty()) {
                problems.append(path + QStringLiteral(": unresolved $ref ") + ref);
                return;
            }
        }
        if (schema.contains(QLatin1String("type"))) {
            const QJsonValue type = schema.value(QLatin1String("type"));
            QStringList types;
            if (type.isArray()) {
                for (const QJsonValue& t : type.toArray())
                    types.append(t.toString());
            } else {
                types.append(type.toString());
            }
            bool matched = false;
            for (const QString& t : types)
                matched = matched || hasType(value, t);
            if (!matched) {
                problems.append(
                    path + QStringLiteral(": expected ") + types.join(QLatin1Char('|')));
                return;
            }
        }
        if (schema.contains(QLatin1String("enum"))
            && !schema.value(QLatin1String("enum")).toArray().contains(value))
            problems.append(path + QStringLiteral(": not one of the allowed values"));
        if (schema.contains(QLatin1String("const"))
            && schema.value(QLatin1String("const")) != value)
            problems.append(path + QStringLiteral(": not the constant value"));
        if (value.isDouble()) {
            if (schema.contains(QLatin1String("minimum"))
                && value.toDouble() < schema.value(QLatin1String("minimum")).toDouble())
                problems.append(path + QStringLiteral(": below minimum"));
            if (schema.contains(QLatin1String("maximum"))
                && value.toDouble() > schema.value(QLatin1String("maximum")).toDouble())
                problems.append(path + QStringLiteral(": above maximum"));
        }
        if (value.isObject()) {
            const QJsonObject object = value.toObject();
            for (const QJsonValue& key : schema.value(QLatin1String("required")).toArray()) {
                if (!object.contains(key.toString()))
                    problems.append(
                        path + QStringLiteral(": missing required key ") + key.toString());
            }
            const QJsonObject properties = schema.value(QLatin1String("properties")).toObject();
            const QJsonValue additional = schema.value(QLatin1String("additionalProperties"));
            for (auto it = object.begin(); it != object.end(); ++it) {
                const QString child = path + QLatin1Char('.') + it.key();
                if (properties.contains(it.key()))
                    checkValue(it.value(), properties.value(it.key()).toObject(), child, problems);
                else if (additional.isObject())
                    checkValue(it.value(), additional.toObject(), child, problems);
            }
        }
        if (value.isArray() && schema.contains(QLatin1String("items"))) {
            const QJsonArray array = value.toArray();
            const QJsonObject items = schema.value(QLatin1String("items")).toObject();
            for (qsizetype i = 0; i < array.size(); ++i)
                checkValue(array[i], items, path + QStringLiteral("[%1]").arg(i), problems);
        }
    }

    QJsonObject m_root;
};

} // namespace cw::testing
