#pragma once

#include "engine/common/result.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace cw::llm {

// A field the model fills for a category, so playbook rules that read fields
// (max_field, min_field, one_of) can judge the model's findings too.
struct ModelField {
    QString name; // "notice_days": the name the playbook and the fast extractors use
    QString type; // "integer", "number" or "string"
    QString meaning; // for the prompt: "days of notice needed to stop the renewal"
};

// What the model is asked about one CUAD category.
struct CategoryQuestion {
    QString category; // exact CUAD name
    QString meaning; // one sentence for the prompt, in our own words
    QStringList keywords; // lower-case stems for the keyword search when the fast head found none
    QList<ModelField> fields;
};

// Categories the model is asked about together because the same clauses decide them
// (a liability clause caps, uncaps or liquidates damages). Every category is in exactly one
// group.
struct CategoryGroup {
    QString id; // "liability"
    QList<CategoryQuestion> categories;
};

// The questions file's format this reader knows ("format" in the file).
inline constexpr int kQuestionsFormat = 1;

// Reads the groups from a questions file (the LLM head plugin's llm_questions.json):
//   {"format": 1, "groups": [{"id", "categories": [{"category", "meaning", "keywords": [..],
//    "fields": [{"name", "type": "integer"|"number"|"string", "meaning"}]}]}]}
// Errors name the file, the group and the field; a category in two groups is an error.
Result<QList<CategoryGroup>> readCategoryGroups(const QString& path);
Result<QList<CategoryGroup>> parseCategoryGroups(const QByteArray& json, const QString& where);

} // namespace cw::llm
