#pragma once

#include "app/server/api_keys.h"
#include "app/server/served_model.h"
#include "app/server/server_metrics.h"
#include "engine/generation/request_scheduler.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
} // namespace httplib

namespace cw::server {

class HttpFront;
struct FrontRefusal;

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8642; // 0: any free port (port() says which)
    ApiKeys apiKeys; // empty: no authentication (only sensible on 127.0.0.1)
    std::size_t maxBodyBytes = 4u << 20; // larger bodies: 413
    std::int64_t maxRequestTokens = 0; // prompt + max_tokens; 0: the model's context. More: 413
    // A request's head and body must arrive within this of its first byte (408 after).
    int readTimeoutSeconds = 10;
    int writeTimeoutSeconds = 30; // a client that stops reading is dropped after this
    int idleTimeoutSeconds = 5; // keep-alive connections without a request are closed
    int maxRequestSeconds = 600; // a generation still running then is cancelled
    std::size_t maxConnections = 1024; // open at once; more close the longest-waiting one
    std::size_t maxRequestsPerConnection = 100; // keep-alive requests on one connection
    // Threads answering POST requests: set above the scheduler's running + queued requests
    // (server_main: --parallel + --queue + 8), so that a full queue answers 429 rather than
    // leaving requests waiting for a thread.
    std::size_t workers = 80;
    // Without API keys (loopback), requests from a web page are refused unless their Origin
    // is one of these ("http://host:port"); the server's own origins are always allowed.
    std::vector<std::string> allowedOrigins;
};

// Threads for POST requests: every admitted request (running or queued) holds one while it
// waits or streams, and 8 more keep refusals (429) and errors immediate.
std::size_t httpWorkersFor(const engine::SchedulerOptions& scheduling);

// The OpenAI-compatible HTTP API over one model and its RequestScheduler: GET /health,
// GET /metrics (Prometheus), GET /v1/models, POST /v1/chat/completions and
// POST /v1/completions, streaming (SSE) or whole. Connections belong to an HttpFront
// (http_front.h), which hands cpp-httplib only whole requests to route and answer. Every
// error is a JSON body {"error": {"message", "type", "code"}}; a client that goes away
// cancels its generation (a stream at its next write, a whole answer within 20 ms).
class CompletionServer {
public:
    CompletionServer(
        ServedModel& model, engine::RequestScheduler& scheduler, ServerOptions options);
    ~CompletionServer();

    // Binds host:port. Errors: the address is taken or cannot be bound.
    Result<void> bind();
    int port() const { return m_port; }
    // Serves until stop() (from another thread). Call bind() first.
    void serve();
    void stop();

private:
    void routes();
    bool authorized(const httplib::Request& request, httplib::Response& response);
    // No-key mode: the Host is this machine and the Origin (if any) an allowed one.
    bool fromAllowedPlace(const httplib::Request& request, httplib::Response& response);
    void logRefusal(const FrontRefusal& refusal);
    void completions(const httplib::Request& request, httplib::Response& response, bool chat);
    void sendError(httplib::Response& response, int status, const std::string& message,
        const std::string& code = {});

    ServedModel& m_model;
    engine::RequestScheduler& m_scheduler;
    ServerOptions m_options;
    ServerMetrics m_metrics;
    class Router;
    std::unique_ptr<Router> m_http; // routes and writes answers (httplib)
    std::unique_ptr<HttpFront> m_front; // owns the sockets
    int m_port = 0;
    std::int64_t m_started = 0;
};

} // namespace cw::server
