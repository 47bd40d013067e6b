// Routes, authentication, limits and logs of the HTTP API; the generation endpoints are in
// completion_endpoint.cpp.
#include "app/server/completion_server.h"

#include "app/server/openai_responses.h"
#include "app/server/request_log.h"
#include "app/server/server_log.h"

#include <chrono>
#include <httplib.h>
#include <sys/socket.h>

namespace cw::server {

namespace {

const char* kJson = "application/json";

std::string describeBytes(std::size_t bytes)
{
    if (bytes % (1u << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes % (1u << 10) == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

} // namespace

CompletionServer::CompletionServer(
    ServedModel& model, engine::RequestScheduler& scheduler, ServerOptions options)
    : m_model(model)
    , m_scheduler(scheduler)
    , m_options(std::move(options))
    , m_metrics(
          model.model->kvBlockTokens(), model.model->kvMaxBlocks() * model.model->kvBlockTokens())
    , m_http(std::make_unique<httplib::Server>())
    , m_started(std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
                    .count())
{
    const int threads = std::max(4, m_options.connections);
    m_http->new_task_queue = [threads] { return new httplib::ThreadPool(std::size_t(threads)); };
    m_http->set_payload_max_length(m_options.maxBodyBytes);
    m_http->set_read_timeout(m_options.readTimeoutSeconds, 0);
    m_http->set_write_timeout(m_options.writeTimeoutSeconds, 0);
    m_http->set_keep_alive_timeout(m_options.idleTimeoutSeconds);
    m_http->set_keep_alive_max_count(1000);
    // Streamed tokens are small writes: send each at once rather than wait for an ACK.
    m_http->set_tcp_nodelay(true);
    // SO_REUSEADDR (a restart may bind while old connections linger), not httplib's default
    // SO_REUSEPORT, which would let a second server bind the same port and take half the
    // clients. The listening socket is kept to raise its backlog after bind().
    m_http->set_socket_options([this](int socket) {
        int yes = 1;
        ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        m_listenSocket = socket;
    });
    routes();
}

CompletionServer::~CompletionServer() = default;

Result<void> CompletionServer::bind()
{
    if (m_options.port == 0) {
        m_port = m_http->bind_to_any_port(m_options.host);
        if (m_port <= 0)
            return Error { "cannot listen on " + m_options.host + " (any port)" };
    } else {
        if (!m_http->bind_to_port(m_options.host, m_options.port))
            return Error { "cannot listen on " + m_options.host + ":"
                + std::to_string(m_options.port) + " (in use, or not an address of this machine)" };
        m_port = m_options.port;
    }
    // httplib listens with a backlog of 5: a burst of clients (a review's dozen questions, a
    // team at 9 am) overflows it and the kernel drops their SYNs, which costs each a 1 s
    // retransmit. Calling listen() again on Linux only raises the backlog.
    if (m_listenSocket >= 0)
        ::listen(m_listenSocket, SOMAXCONN);
    return {};
}

void CompletionServer::serve()
{
    m_http->listen_after_bind();
}

void CompletionServer::stop()
{
    m_http->stop();
}

void CompletionServer::sendError(
    httplib::Response& response, int status, const std::string& message, const std::string& code)
{
    response.status = status;
    response.set_content(dumpJson(errorJson(status, message, code)), kJson);
    requestLog()["error"] = message;
}

bool CompletionServer::authorized(const httplib::Request& request, httplib::Response& response)
{
    if (m_options.apiKeys.empty())
        return true;
    if (!request.has_header("Authorization")) {
        response.set_header("WWW-Authenticate", "Bearer");
        sendError(response, 401, "an API key is needed: send 'Authorization: Bearer KEY'",
            "missing_api_key");
        return false;
    }
    if (!m_options.apiKeys.acceptsAuthorization(request.get_header_value("Authorization"))) {
        response.set_header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
        sendError(response, 401, "the API key is not valid", "invalid_api_key");
        return false;
    }
    return true;
}

void CompletionServer::routes()
{
    using httplib::Request;
    using httplib::Response;
    using Handled = httplib::Server::HandlerResponse;

    m_http->set_pre_routing_handler([this](const Request& request, Response& response) {
        startRequestLog();
        const bool open = request.path == "/health";
        if (!open && !authorized(request, response))
            return Handled::Handled;
        return Handled::Unhandled;
    });

    m_http->Get("/health", [this](const Request&, Response& response) {
        const auto stats = m_scheduler.stats();
        const nlohmann::json body { { "status", "ok" }, { "model", m_model.id },
            { "queued", stats.queued }, { "active", stats.active } };
        response.set_content(dumpJson(body), kJson);
    });

    m_http->Get("/metrics", [this](const Request&, Response& response) {
        response.set_content(
            m_metrics.render(m_scheduler.stats(), m_model.model->expertLoad()), "text/plain; version=0.0.4; charset=utf-8");
    });

    m_http->Get("/v1/models", [this](const Request&, Response& response) {
        const nlohmann::json model { { "id", m_model.id }, { "object", "model" },
            { "created", m_started }, { "owned_by", "clausewright" },
            { "max_model_len", m_model.model->contextLength() } };
        const nlohmann::json body { { "object", "list" },
            { "data", nlohmann::json::array({ model }) } };
        response.set_content(dumpJson(body), kJson);
    });

    m_http->Post("/v1/chat/completions", [this](const Request& request, Response& response) {
        completions(request, response, true);
    });
    m_http->Post("/v1/completions", [this](const Request& request, Response& response) {
        completions(request, response, false);
    });

    // Errors httplib answers itself (no route, body too large, a request it cannot read)
    // get the same JSON body as ours.
    const httplib::Server::HandlerWithResponse onError
        = [this](const Request& request, Response& response) {
              if (!response.body.empty())
                  return Handled::Unhandled;
              std::string message = "request failed";
              std::string code;
              if (response.status == 404) {
                  message = "no endpoint " + request.method + " " + request.path
                      + " (this server has /v1/models, /v1/chat/completions, /v1/completions, "
                        "/health and /metrics)";
                  code = "not_found";
              } else if (response.status == 413) {
                  message = "the request body is larger than this server's limit of "
                      + describeBytes(m_options.maxBodyBytes);
                  code = "body_too_large";
              } else if (response.status == 405) {
                  message = "method " + request.method + " is not allowed on " + request.path;
              } else if (response.status == 400) {
                  message = "the HTTP request could not be read";
              }
              sendError(response, response.status, message, code);
              return Handled::Handled;
          };
    m_http->set_error_handler(onError);

    m_http->set_exception_handler(
        [this](const Request&, Response& response, std::exception_ptr error) {
            std::string what = "unknown error";
            try {
                if (error)
                    std::rethrow_exception(error);
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            sendError(response, 500, "internal error: " + what, "internal_error");
        });

    m_http->set_logger([this](const Request& request, const Response& response) {
        const bool generation
            = request.path == "/v1/chat/completions" || request.path == "/v1/completions";
        m_metrics.countRequest(
            generation || request.path == "/v1/models" ? request.path : "other", response.status);
        nlohmann::json fields = requestLog();
        fields["method"] = request.method;
        fields["path"] = request.path;
        fields["status"] = response.status;
        fields["remote"] = request.remote_addr;
        fields["ms"] = requestMilliseconds();
        logEvent(response.status >= 500 ? "error" : (response.status >= 400 ? "warning" : "info"),
            "request", std::move(fields));
        startRequestLog(); // a request that fails before routing must not log this one's fields
    });
}

} // namespace cw::server
