#pragma once

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace cw {

// One position of a firm on one category.
//   flag:      every finding of the category gets the rule's risk
//   max_field: fires when the finding's numeric field is above `limit`
//   min_field: fires when the finding's numeric field is below `limit`
//   one_of:    fires when the finding's text field is not one of `values`
struct PlaybookRule {
    enum class Check { Flag, MaxField, MinField, OneOf };
    QString id;
    QString category; // exact CUAD name
    Check check = Check::Flag;
    QString field; // for max_field, min_field, one_of
    double limit = 0.0;
    QStringList values;
    Risk risk = Risk::Medium;
    QString message;
    // The firm's wording for the clause, proposed as a tracked change in the redline: the
    // preferred position, and the fallback it accepts when the other side refuses it (given in
    // the change's comment; the tracked change itself when there is no preferred wording).
    QString preferredText;
    QString fallbackText;
};

// A firm's playbook: its rules, the categories it expects every contract to have, and the
// risk of a finding no rule fires on.
struct Playbook {
    QString name;
    QString path;
    QList<PlaybookRule> rules;
    QStringList expected;
    Risk defaultRisk = Risk::Low;
};

// Reads a playbook (YAML, or JSON which is YAML too). Every error names the file, the rule
// (by number and id) and the field: "p.yaml: rule 2 (cap): 'risk' must be low, medium or high".
Result<Playbook> loadPlaybook(const QString& path);
Result<Playbook> parsePlaybook(const QByteArray& yaml, const QString& name);

// resources/playbooks/default.yaml from the source tree or the install.
QString defaultPlaybookPath();

// Sets each finding's risk, rule id and rationale (the highest risk among the rules that
// fire; ties keep the first rule) and fills the review's summary: counts, missing expected
// categories and one paragraph.
void applyPlaybook(const Playbook& playbook, Review& review);

} // namespace cw
