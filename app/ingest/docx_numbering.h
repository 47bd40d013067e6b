#pragma once

#include "engine/common/result.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QVector>

namespace cw::ingest {

// The list definitions of a WordprocessingML document (word/numbering.xml) and the counters
// that render each numbered paragraph's label ("1.2", "(a)", "iv.", "第三条") as Word shows it.
class DocxNumbering {
public:
    struct Level {
        int start = 1;
        QString format = QStringLiteral("decimal"); // w:numFmt
        QString text = QStringLiteral("%1."); // w:lvlText
        QString suffix = QStringLiteral("tab"); // w:suff: tab, space, nothing
        bool legal = false; // w:isLgl: render every level as decimal
    };

    // Parses numbering.xml; `part` names the part in error messages.
    static Result<DocxNumbering> parse(const QByteArray& xml, const QString& part);

    // The label of the next paragraph of list `numId` at level `ilvl`, followed by its suffix
    // (a tab or space, or nothing); advances the counters. Empty when the list is unknown or
    // the level shows no label.
    QString nextLabel(int numId, int ilvl);

    // Renders one counter value in a w:numFmt ("lowerRoman", "upperLetter", ...).
    static QString formatNumber(int value, const QString& format);

private:
    static constexpr int kLevels = 9;
    struct Abstract {
        Level levels[kLevels];
    };
    struct Instance {
        int abstractId = -1;
        int startOverride[kLevels] = { -1, -1, -1, -1, -1, -1, -1, -1, -1 };
        Level overrideLevel[kLevels];
        bool hasOverrideLevel[kLevels] = {};
    };
    struct Counters {
        int value[kLevels] = {};
        bool used[kLevels] = {};
    };

    QHash<int, Abstract> m_abstracts;
    QHash<int, Instance> m_instances;
    // Word counts per abstract list: instances of one abstract list continue each other
    // unless they restart with a start override.
    QHash<int, Counters> m_counters;
    QHash<int, bool> m_instanceStarted;
};

} // namespace cw::ingest
