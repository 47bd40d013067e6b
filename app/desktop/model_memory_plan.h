#pragma once

#include "engine/backend/expert_placement.h"
#include "engine/common/result.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace cw {

// Where a model's memory would go, in words: Model Settings shows this instead of the
// `clausewright-cli inspect` JSON it is computed from ("Fits: 21.3 of 24.0 GiB on GPU 0").
// The figures follow what the engine allocates at load (engine::Model::create and the
// backends): weights, the KV pool the engine sizes from the context (f32, as both backends
// store it), and the recurrent states of the sequences a review runs at once. Each step's
// working memory is not in the file; the GPU backend checks the exact total when it loads.

// The device the plan is for, as Model Settings lists it.
struct MemoryTarget {
    bool gpu = false;
    QString label; // "GPU 0 (NVIDIA H200)", "the CPU"
    quint64 memoryBytes = 0; // the card's memory, or the machine's
    quint64 budgetBytes = 0; // GPU: what the model may take (Model Settings); 0: the card's
};

struct ModelMemoryPlan {
    bool fits = false;
    qint64 modelContext = 0; // the model's own maximum context; 0: not stated in the file
    quint64 neededBytes = 0; // weights, KV pool and states on the target
    QString headline; // "Fits: 21.3 of 24.0 GiB on GPU 0 (NVIDIA H200)."
    QStringList details; // what is where, then the model itself
    QString text() const
    {
        return (QStringList { headline } + details).join(QStringLiteral("\n\n"));
    }
};

// Reserved on a GPU for each step's buffers (activations, products' scratch, cuBLAS) on top
// of weights, KV cache and states: about what the target model needs for a 4,096-token step.
constexpr quint64 kGpuStepAllowanceBytes = engine::kGpuStepMemoryBytes;

// inspectJson: the output of `clausewright-cli inspect --model M --context N --kv-bytes 4`.
// context: the tokens per sequence Model Settings would save.
Result<ModelMemoryPlan> planModelMemory(
    const QByteArray& inspectJson, const MemoryTarget& target, qint64 context);

// "21.3 GiB", "512 MiB": one decimal for GiB, none below.
QString memorySize(quint64 bytes);
QString memoryOfTotal(quint64 part, quint64 total);

} // namespace cw
