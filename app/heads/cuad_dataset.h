#pragma once

#include "engine/common/result.h"

#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

namespace cw::heads {

// The 41 CUAD categories in CUAD order, spelled as in master_clauses.csv.
const QStringList& cuadCategories();

// One labelled contract of the development data (one JSON line).
struct LabelledContract {
    QString id;
    QString text;
    // Gold spans per category as [start, end) UTF-16 offsets into text (pieces of an
    // <omitted> span are kept as separate spans; spans the converter could not place are
    // dropped). A category absent from the map, or with no spans, is absent.
    QMap<QString, QList<QPair<qsizetype, qsizetype>>> spans;
    // Which categories the lawyers marked present (labels[cat] not empty).
    QStringList present;
    QMap<QString, QString> answers; // CUAD's normalised answers
};

// Reads the JSON Lines file (optionally .xz-compressed). Errors name the file and line.
Result<QList<LabelledContract>> readLabelledContracts(const QString& path);
// The contracts of several such files, in the order given; the first error stops it.
Result<QList<LabelledContract>> readLabelledContracts(const std::vector<std::string>& paths);

// Decompresses .xz bytes; the error names `name`.
Result<QByteArray> decompressXz(const QByteArray& bytes, const QString& name);

} // namespace cw::heads
