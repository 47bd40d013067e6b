#pragma once

#include "app/review/review_types.h"

#include <QList>
#include <QSet>

namespace cw::heads {

// Categories read from the opening by rules rather than by the classifier.
const QSet<QString>& documentLevelCategories(); // Document Name, Parties, Agreement/Effective Date

// Findings for the document-level categories: the title, each party's name and defined
// name, the agreement date and the effective date, with their fields.
QList<Finding> documentLevelFindings(const QString& text);

// Adds fields (fieldsForFinding) to every finding, in place.
void addFindingFields(QList<Finding>& findings);

} // namespace cw::heads
