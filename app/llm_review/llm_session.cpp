#include "app/llm_review/llm_session.h"

#include "engine/generation/constraint_vocabulary.h"
#include "engine/model_files/model_loader.h"
#include "engine/runtime/precision.h"

#include <QFileInfo>

namespace cw::llm {

namespace {

// Sequences decoded together (more batch the product better on a GPU; each holds a state
// slot and KV blocks) and requests that may wait behind them (a long contract's questions).
constexpr std::size_t kActive = 16;
constexpr std::size_t kQueued = 4096;

} // namespace

Result<std::shared_ptr<LlmSession>> LlmSession::open(
    const QString& path, const LlmSessionOptions& options)
{
    if (!QFileInfo::exists(path))
        return makeError(path.toStdString() + ": no such model file or folder");
    auto description = engine::openModel(path.toStdString());
    if (!description)
        return description.error();
    auto tokenizer = engine::tokenizerFromSource(description->tokenizer);
    if (!tokenizer)
        return makeError(path.toStdString() + ": tokenizer: " + tokenizer.error().message);
    std::shared_ptr<LlmSession> session(new LlmSession);
    session->m_path = path;
    session->m_options = options;
    session->m_chatTemplate = engine::ChatTemplate::fromJinja(description->chatTemplate);
    engine::ModelOptions modelOptions;
    modelOptions.threads = options.threads;
    modelOptions.device = options.device.toStdString();
    modelOptions.contextLength = options.contextLength;
    modelOptions.gpuMemoryGiB = options.gpuMemoryGiB;
    if (auto ok = engine::applyPrecision(modelOptions, options.precision.toStdString()); !ok)
        return makeError(path.toStdString() + ": " + ok.error().message);
    engine::SchedulerOptions scheduling;
    // A review asks all its questions at once; they run kActive at a time and the rest wait.
    scheduling.maxActive = kActive;
    scheduling.maxQueued = kQueued;
    scheduling.minSharedPrefix = 16; // a code skill's chat header and system prompt count too
    // Each running sequence, each cached prefix and the one being cached hold a state slot.
    modelOptions.maxSequences = int(scheduling.maxActive + scheduling.prefixCacheEntries + 1);
    auto model = engine::Model::create(std::move(*description), modelOptions);
    if (!model)
        return makeError(path.toStdString() + ": " + model.error().message);
    session->m_model = std::move(*model);
    session->m_tokenizer = std::make_unique<engine::Tokenizer>(std::move(*tokenizer));
    auto vocabulary = engine::constraintVocabulary(*session->m_tokenizer, *session->m_model);
    if (!vocabulary)
        return makeError(path.toStdString() + ": " + vocabulary.error().message);
    session->m_vocabulary = std::move(*vocabulary);
    session->m_scheduler = std::make_unique<engine::RequestScheduler>(
        *session->m_model, *session->m_tokenizer, scheduling);
    return session;
}

QString LlmSession::name() const
{
    return QFileInfo(m_path).fileName();
}

Result<std::shared_ptr<LlmSession>> LlmSessionCache::get(
    const QString& path, const LlmSessionOptions& options)
{
    std::lock_guard guard(m_mutex);
    const QString canonical = QFileInfo(path).absoluteFilePath();
    if (m_session && m_session->path() == canonical && m_session->options() == options)
        return m_session;
    m_session.reset(); // free the old weights before loading the new ones
    auto opened = LlmSession::open(canonical, options);
    if (!opened)
        return opened.error();
    m_session = *opened;
    return m_session;
}

void LlmSessionCache::clear()
{
    std::lock_guard guard(m_mutex);
    m_session.reset();
}

} // namespace cw::llm
