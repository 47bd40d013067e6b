#pragma once

#include "app/generation/backend_order.h"
#include "app/generation/remote_server.h"
#include "app/playbook/playbook.h"
#include "app/review/review_events.h"
#include "app/review/review_types.h"

#include <QString>
#include <functional>

namespace cw {

namespace llm {
class LlmSessionCache;
}
struct LoadedHead;

struct ModelStageOptions {
    QString modelPath;
    QString heads; // "llm": the model's findings only; "all": merged with the fast heads'
    int threads = 0;
    QString device = QStringLiteral("cpu");
    qint64 contextLength = 0;
    generation::RemoteServer remote;
    bool remoteKeyFromStore = false;
    generation::BackendOrder order = generation::BackendOrder::LocalOnly;
    QString precision = QStringLiteral("bf16"); // the in-process model's: f32, tf32 or bf16
    double gpuMemoryGiB = 0.0; // the in-process model's GPU budget (0: the card's free memory)
};

// The language model's part of a review: loads (or reuses) the model, or connects to the
// remote server, in the options' order (the next when one cannot be used), lends it to the LLM
// head plugin `llmHead` (LlmHeadInput) to ask about the contract, and replaces review.findings with
// the merged (heads "all") or the model's own (heads "llm") findings, then applies the playbook
// with the model's risk judgements kept. `fastFindings` are the fast heads' findings the questions
// are planned from. A cancel keeps what was answered and says so in a warning. Errors: the model
// cannot be loaded, or the engine failed; the caller decides whether the fast review stands
// instead.
Result<void> runModelStage(Review& review, const LoadedHead& llmHead,
    const QList<Finding>& fastFindings, const Playbook& playbook, const ModelStageOptions& options,
    llm::LlmSessionCache& sessions, const std::function<bool()>& cancelled,
    const ReviewEvents& events);

// applyPlaybook, then the model's findings keep the risk the model judged against the
// playbook (the rule that would fire stays as ruleId, the model's note as rationale) and
// the summary is counted again.
void applyPlaybookKeepingModelRisk(const Playbook& playbook, Review& review);

} // namespace cw
