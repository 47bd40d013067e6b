// libFuzzer target: segmentClauses on any text gives clauses whose spans, levels and parents
// are consistent.
#include "app/ingest/document_reader.h"
#include "app/segment/clause_segmenter.h"

#include <QString>
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char*>(data), qsizetype(size));
    const cw::Document document = cw::documentFromText(text);
    const QList<cw::Clause> clauses = cw::segmentClauses(document);
    qsizetype previous = -1;
    for (const cw::Clause& clause : clauses) {
        const bool spans = clause.start > previous && clause.start <= clause.ownEnd
            && clause.ownEnd <= clause.end && clause.end <= text.size();
        const bool parent = clause.parent < 0
            ? clause.level == 0
            : clause.parent < clause.index && clauses[clause.parent].level == clause.level - 1
                && clauses[clause.parent].end >= clause.end;
        if (!spans || !parent)
            __builtin_trap();
        previous = clause.start;
    }
    return 0;
}
