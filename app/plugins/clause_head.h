#pragma once

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QtPlugin>
#include <functional>
#include <memory>

namespace cw {

// What a head needs no model for (fast) or runs the language model (llm).
enum class HeadKind { Fast, Llm };

QString headKindName(HeadKind kind); // "fast", "llm"

// Who a head is: read from the plugin's JSON metadata (the "MetaData" object of
// Q_PLUGIN_METADATA) or given by a built-in head.
struct HeadMetadata {
    QString id; // "cuad_classifier"
    QString name; // "CUAD clause classifier"
    QString version; // "1.0"
    HeadKind kind = HeadKind::Fast;
    QStringList categories; // exact CUAD names this head may report
};

// What a run may look at besides the document: a cancel flag polled between steps and
// a progress callback (done, total) for heads that take long.
struct HeadRunContext {
    std::function<bool()> cancelled = [] { return false; };
    std::function<void(int, int)> progress;
};

// A clause-extraction head: takes the document and its clauses and returns findings
// (category, span in Document::text, fields, confidence, rationale). Heads hold no
// mutable state during find(), so one head may serve several reviews one after another.
class ClauseHead {
public:
    virtual ~ClauseHead() = default;
    virtual HeadMetadata metadata() const = 0;
    // Loads the head's data files (a model, patterns) from `dataDir`, the folder the plugin
    // was found in (or the built-in data folder); errors name the file.
    virtual Result<void> load(const QString& dataDir) = 0;
    // The findings; an error only for a broken head (a missing model), never for a
    // contract that has none of its categories. Cancelled runs return "cancelled".
    virtual Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const = 0;
};

// The interface a Qt plugin's root object implements: it makes heads. The plugin's JSON
// file holds {"id", "name", "version", "kind": "fast"|"llm", "categories": [...],
// "data": "<file or folder beside the plugin, optional>"}.
class ClauseHeadFactory {
public:
    virtual ~ClauseHeadFactory() = default;
    virtual std::unique_ptr<ClauseHead> createHead() const = 0;
};

} // namespace cw

#define CW_CLAUSE_HEAD_FACTORY_IID "org.clausewright.ClauseHeadFactory/1.0"
Q_DECLARE_INTERFACE(cw::ClauseHeadFactory, CW_CLAUSE_HEAD_FACTORY_IID)
