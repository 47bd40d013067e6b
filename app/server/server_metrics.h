#pragma once

#include "engine/generation/request_scheduler.h"
#include "engine/models/expert_load.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <string>

namespace cw::server {

// The server's Prometheus metrics (prometheus-cpp's registry and text format), served at
// /metrics: requests by endpoint and status, prompt and generated tokens, generation rate,
// queue length and running sequences, time to first token, KV cache use, and the routed
// experts' load per MoE layer where the backend counts it (the CPU's).
class ServerMetrics {
public:
    ServerMetrics(std::int64_t kvBlockTokens, std::int64_t kvTotalTokens);

    void countRequest(const std::string& endpoint, int status);
    void observeTimeToFirstToken(double seconds);
    void observeRequest(double seconds);
    void countTokens(std::int64_t prompt, std::int64_t generated);
    // The Prometheus text exposition, gauges refreshed from the scheduler's figures and the
    // model's expert counts (`load` may be null: not counted).
    std::string render(const engine::SchedulerStats& stats, const engine::ExpertLoad* load);

private:
    std::shared_ptr<prometheus::Registry> m_registry;
    prometheus::Family<prometheus::Counter>& m_requests;
    prometheus::Counter& m_promptTokens;
    prometheus::Counter& m_generatedTokens;
    prometheus::Histogram& m_timeToFirstToken;
    prometheus::Histogram& m_requestSeconds;
    prometheus::Gauge& m_queued;
    prometheus::Gauge& m_active;
    prometheus::Gauge& m_tokensPerSecond;
    prometheus::Gauge& m_kvTokensInUse;
    prometheus::Gauge& m_kvTokensTotal;
    prometheus::Gauge& m_cachedPrefixes;
    prometheus::Counter& m_reusedPromptTokens;
    prometheus::Family<prometheus::Counter>& m_expertChoices;
    prometheus::Family<prometheus::Gauge>& m_busiestExpertShare;
    prometheus::Family<prometheus::Gauge>& m_expertsUsed;
    std::int64_t m_kvBlockTokens;

    std::mutex m_mutex; // the rate's window
    std::chrono::steady_clock::time_point m_lastRender;
    std::int64_t m_lastGenerated = 0;
    std::int64_t m_lastReused = 0;
    std::vector<std::uint64_t> m_lastChoices; // per layer, for the counter's increments
};

} // namespace cw::server
