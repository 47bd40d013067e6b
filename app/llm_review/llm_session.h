#pragma once

#include "engine/chat/chat_template.h"
#include "engine/common/result.h"
#include "engine/generation/request_scheduler.h"
#include "engine/runtime/model.h"
#include "engine/sampling/token_vocabulary.h"
#include "engine/tokenizer/tokenizer.h"

#include <QString>
#include <memory>
#include <mutex>

namespace cw::llm {

struct LlmSessionOptions {
    int threads = 0; // CPU threads; 0: every core
    QString device = QStringLiteral("cpu"); // engine::ModelOptions::device: cpu, cuda:N, auto
    std::int64_t contextLength = 0; // tokens per sequence; 0: the model's (capped on a GPU)
    QString precision = QStringLiteral("bf16"); // f32, tf32 or bf16 (engine/runtime/precision.h)
    double gpuMemoryGiB = 0.0; // engine::ModelOptions::gpuMemoryGiB (0: the card's free memory)
    bool operator==(const LlmSessionOptions&) const = default;
};

// A language model loaded for reviews and the code panel: weights, tokenizer, chat template,
// the vocabulary its answer grammars use, and the model's one scheduler, which every request
// on this model goes through (reviews and code-panel answers may run at once; it batches
// them and shares their cached prefixes). Loading takes seconds to minutes, so one session
// serves every review until the user picks another model.
class LlmSession {
public:
    // Opens a GGUF file or Hugging Face folder; errors name the path and the problem.
    static Result<std::shared_ptr<LlmSession>> open(
        const QString& path, const LlmSessionOptions& options = {});

    const QString& path() const { return m_path; }
    QString name() const; // file or folder name, for the review's "model" field
    const engine::Model& model() const { return *m_model; }
    engine::RequestScheduler& scheduler() { return *m_scheduler; }
    const engine::Tokenizer& tokenizer() const { return *m_tokenizer; }
    const engine::ChatTemplate& chatTemplate() const { return m_chatTemplate; }
    const std::shared_ptr<const sampling::TokenVocabulary>& vocabulary() const
    {
        return m_vocabulary;
    }
    std::int64_t contextLength() const { return m_model->contextLength(); }
    const LlmSessionOptions& options() const { return m_options; }

private:
    LlmSession() = default;

    QString m_path;
    LlmSessionOptions m_options;
    std::unique_ptr<engine::Model> m_model;
    std::unique_ptr<engine::Tokenizer> m_tokenizer;
    engine::ChatTemplate m_chatTemplate;
    std::shared_ptr<const sampling::TokenVocabulary> m_vocabulary;
    std::unique_ptr<engine::RequestScheduler> m_scheduler; // declared last: goes first
};

// Keeps the last session opened, so reviews with the same model path and options (device,
// context, threads: everything that changes the loaded model) share it. Thread-safe.
class LlmSessionCache {
public:
    Result<std::shared_ptr<LlmSession>> get(
        const QString& path, const LlmSessionOptions& options = {});
    void clear();

private:
    std::mutex m_mutex;
    std::shared_ptr<LlmSession> m_session;
};

} // namespace cw::llm
