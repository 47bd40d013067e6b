#pragma once

// The clause-head plugin interface: the one header of the Head SDK a head includes. It is
// installed (with review_types.h and result.h) by the HeadSDK component, so a head built
// outside this tree sees exactly what the host was built with.

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QtPlugin>
#include <functional>
#include <memory>

// The plugin ABI: the virtual functions of ClauseHeadFactory and ClauseHead. The IID carries
// it, and Qt stores the IID in the plugin file's metadata, so the host refuses a plugin built
// against another ABI before running any of its code. Bump when a virtual function of either
// class is added, removed or changes its signature.
#define CW_HEAD_PLUGIN_ABI_VERSION 2
#define CW_HEAD_PLUGIN_IID_PREFIX "org.clausewright.ClauseHeadFactory/"
#define CW_HEAD_STRINGIFY_(x) #x
#define CW_HEAD_STRINGIFY(x) CW_HEAD_STRINGIFY_(x)
#define CW_CLAUSE_HEAD_FACTORY_IID                                                                 \
    CW_HEAD_PLUGIN_IID_PREFIX CW_HEAD_STRINGIFY(CW_HEAD_PLUGIN_ABI_VERSION)

namespace cw {

// The layout of the values that cross the boundary by value or reference: Document, Clause,
// Finding (review_types.h), HeadMetadata, HeadSetup, HeadRunContext. Same virtual functions but
// another struct layout would read garbage, which the IID cannot catch; the host asks each
// factory which version it was compiled with (ClauseHeadFactory::typesVersion) and refuses
// another. Bump on any change to those structs.
inline constexpr int kHeadTypesVersion = 2;

// What a head needs no model for (fast) or runs the language model (llm).
enum class HeadKind { Fast, Llm };

QString headKindName(HeadKind kind); // "fast", "llm"

// Who a head is, read by the host from the plugin's JSON metadata (the "MetaData" object of
// Q_PLUGIN_METADATA): the only place a plugin states it.
//   {"id", "name", "version", "kind": "fast"|"llm", "categories": [...],
//    "data": "<file or folder beside the plugin, optional>"}
struct HeadMetadata {
    QString id; // "cuad_classifier"
    QString name; // "CUAD clause classifier"
    QString version; // "1.0"
    HeadKind kind = HeadKind::Fast;
    // The categories this head may report; the host drops any other, with a message.
    QStringList categories;
    QString data; // as written in the JSON, relative to the plugin's folder; empty: none
};

// What the host hands a factory: the metadata it read, where the plugin file is, and the
// absolute path of its data file or folder (empty when the JSON names none). The host has
// checked that the data path exists.
struct HeadSetup {
    HeadMetadata metadata;
    QString pluginFile;
    QString dataPath;
};

struct LlmHeadInput; // app/plugins/llm_head.h: the language model the host lends a run

// What a run may look at besides the document: a cancel flag polled between steps, a progress
// callback (done, total) for heads that take long, and, for llm heads, the model and what the
// fast heads found (null for fast heads, and for llm heads when no model is set).
struct HeadRunContext {
    std::function<bool()> cancelled = [] { return false; };
    std::function<void(int, int)> progress;
    const LlmHeadInput* llm = nullptr;
};

// A clause-extraction head: takes the document and its clauses and returns findings
// (category, span in Document::text, fields, confidence, rationale). Heads hold no mutable
// state during find(), so one head may serve several reviews one after another.
class ClauseHead {
public:
    virtual ~ClauseHead() = default;
    // The findings; an error only for a broken head, never for a contract that has none of
    // its categories. Cancelled runs return "cancelled".
    virtual Result<QList<Finding>> find(const Document& document, const QList<Clause>& clauses,
        const HeadRunContext& context) const = 0;
};

// The interface a Qt plugin's root object implements: it makes its head from the setup the
// host read, loading the data file there (errors name the file).
class ClauseHeadFactory {
public:
    virtual ~ClauseHeadFactory() = default;
    // Inline, so it is compiled into the plugin: the types version the plugin was built with.
    // Declared first so its slot stays where hosts of every ABI version look for it.
    virtual int typesVersion() const { return kHeadTypesVersion; }
    virtual Result<std::unique_ptr<ClauseHead>> createHead(const HeadSetup& setup) const = 0;
};

} // namespace cw

Q_DECLARE_INTERFACE(cw::ClauseHeadFactory, CW_CLAUSE_HEAD_FACTORY_IID)
