#include "app/server/server_metrics.h"

#include <prometheus/text_serializer.h>

namespace cw::server {

namespace {

prometheus::Histogram::BucketBoundaries secondsBuckets()
{
    return { 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120 };
}

} // namespace

ServerMetrics::ServerMetrics(std::int64_t kvBlockTokens, std::int64_t kvTotalTokens)
    : m_registry(std::make_shared<prometheus::Registry>())
    , m_requests(prometheus::BuildCounter()
                     .Name("clausewright_requests_total")
                     .Help("HTTP requests answered, by endpoint and status code")
                     .Register(*m_registry))
    , m_promptTokens(prometheus::BuildCounter()
                         .Name("clausewright_prompt_tokens_total")
                         .Help("Prompt tokens of answered requests")
                         .Register(*m_registry)
                         .Add({}))
    , m_generatedTokens(prometheus::BuildCounter()
                            .Name("clausewright_generated_tokens_total")
                            .Help("Tokens generated")
                            .Register(*m_registry)
                            .Add({}))
    , m_timeToFirstToken(prometheus::BuildHistogram()
                             .Name("clausewright_time_to_first_token_seconds")
                             .Help("From a request's arrival to its first generated token")
                             .Register(*m_registry)
                             .Add({}, secondsBuckets()))
    , m_requestSeconds(prometheus::BuildHistogram()
                           .Name("clausewright_request_duration_seconds")
                           .Help("From a generation request's arrival to its last token")
                           .Register(*m_registry)
                           .Add({}, secondsBuckets()))
    , m_queued(prometheus::BuildGauge()
                   .Name("clausewright_queue_length")
                   .Help("Requests waiting for a sequence slot")
                   .Register(*m_registry)
                   .Add({}))
    , m_active(prometheus::BuildGauge()
                   .Name("clausewright_active_sequences")
                   .Help("Requests being decoded together")
                   .Register(*m_registry)
                   .Add({}))
    , m_tokensPerSecond(prometheus::BuildGauge()
                            .Name("clausewright_generated_tokens_per_second")
                            .Help("Generation rate since the previous scrape")
                            .Register(*m_registry)
                            .Add({}))
    , m_kvTokensInUse(prometheus::BuildGauge()
                          .Name("clausewright_kv_cache_tokens_in_use")
                          .Help("KV cache positions held by running sequences and cached prefixes")
                          .Register(*m_registry)
                          .Add({}))
    , m_kvTokensTotal(prometheus::BuildGauge()
                          .Name("clausewright_kv_cache_tokens_total")
                          .Help("KV cache positions of the pool (0: grows on demand)")
                          .Register(*m_registry)
                          .Add({}))
    , m_cachedPrefixes(prometheus::BuildGauge()
                           .Name("clausewright_cached_prefixes")
                           .Help("Shared prompt prefixes kept prefilled (each holds one "
                                 "sequence's recurrent state)")
                           .Register(*m_registry)
                           .Add({}))
    , m_reusedPromptTokens(prometheus::BuildCounter()
                               .Name("clausewright_prefix_reused_tokens_total")
                               .Help("Prompt tokens taken from a cached prefix, not prefilled")
                               .Register(*m_registry)
                               .Add({}))
    , m_expertChoices(prometheus::BuildCounter()
                          .Name("clausewright_expert_choices_total")
                          .Help("Routed-expert choices (tokens x experts per token) of each MoE "
                                "layer")
                          .Register(*m_registry))
    , m_busiestExpertShare(prometheus::BuildGauge()
                               .Name("clausewright_expert_busiest_share")
                               .Help("Share of a MoE layer's choices that went to its most "
                                     "chosen expert, since load (1 / experts: even)")
                               .Register(*m_registry))
    , m_expertsUsed(prometheus::BuildGauge()
                        .Name("clausewright_experts_used")
                        .Help("Experts of a MoE layer chosen at least once since load")
                        .Register(*m_registry))
    , m_kvBlockTokens(kvBlockTokens)
    , m_lastRender(std::chrono::steady_clock::now())
{
    m_kvTokensTotal.Set(double(kvTotalTokens));
}

void ServerMetrics::countRequest(const std::string& endpoint, int status)
{
    m_requests.Add({ { "endpoint", endpoint }, { "status", std::to_string(status) } }).Increment();
}

void ServerMetrics::observeTimeToFirstToken(double seconds)
{
    m_timeToFirstToken.Observe(seconds);
}

void ServerMetrics::observeRequest(double seconds)
{
    m_requestSeconds.Observe(seconds);
}

void ServerMetrics::countTokens(std::int64_t prompt, std::int64_t generated)
{
    m_promptTokens.Increment(double(prompt));
    m_generatedTokens.Increment(double(generated));
}

std::string ServerMetrics::render(
    const engine::SchedulerStats& stats, const engine::ExpertLoad* load)
{
    {
        std::lock_guard lock(m_mutex);
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - m_lastRender).count();
        if (seconds > 0)
            m_tokensPerSecond.Set(double(stats.generatedTokens - m_lastGenerated) / seconds);
        m_lastRender = now;
        m_lastGenerated = stats.generatedTokens;
        m_reusedPromptTokens.Increment(double(stats.reusedPromptTokens - m_lastReused));
        m_lastReused = stats.reusedPromptTokens;
        if (load) {
            m_lastChoices.resize(std::size_t(load->layers()), 0);
            for (const auto& layer : load->layerFigures()) {
                const prometheus::Labels labels { { "layer", std::to_string(layer.layer) } };
                auto& last = m_lastChoices[std::size_t(layer.layer)];
                m_expertChoices.Add(labels).Increment(double(layer.choices - last));
                last = layer.choices;
                m_busiestExpertShare.Add(labels).Set(double(layer.busiest) / double(layer.choices));
                m_expertsUsed.Add(labels).Set(double(layer.used));
            }
        }
    }
    m_queued.Set(double(stats.queued));
    m_active.Set(double(stats.active));
    m_cachedPrefixes.Set(double(stats.cachedPrefixes));
    m_kvTokensInUse.Set(double(stats.kvBlocksInUse * m_kvBlockTokens));
    return prometheus::TextSerializer().Serialize(m_registry->Collect());
}

} // namespace cw::server
