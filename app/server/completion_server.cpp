// Routes, authentication, limits and logs of the HTTP API; the generation endpoints are in
// completion_endpoint.cpp.
#include "app/server/completion_server.h"

#include "app/server/byte_sizes.h"
#include "app/server/http_front.h"
#include "app/server/openai_responses.h"
#include "app/server/request_log.h"
#include "app/server/server_log.h"

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <httplib.h>

namespace cw::server {

namespace {

const char* kJson = "application/json";

std::string lowered(std::string text)
{
    for (char& c : text)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return text;
}

// "host" of "host:port", "[::1]:port" or "host".
std::string hostName(const std::string& hostHeader)
{
    std::string host = lowered(hostHeader);
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        return close == std::string::npos ? host : host.substr(1, close - 1);
    }
    const auto colon = host.find(':');
    if (colon != std::string::npos && host.find(':', colon + 1) == std::string::npos)
        host.resize(colon);
    return host;
}

// "localhost" or a loopback address written as an address: 127.0.0.1 to 127.255.255.255, ::1.
// A name that only starts like one ("127.attacker.example") is a name like any other, which
// DNS rebinding can point here.
bool isLoopbackName(const std::string& host)
{
    if (host == "localhost")
        return true;
    in_addr v4 {};
    if (::inet_pton(AF_INET, host.c_str(), &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6 {};
    return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// "http://host:port" of an Origin value, lower case and without a trailing slash.
std::string normalizedOrigin(std::string origin)
{
    origin = lowered(std::move(origin));
    while (!origin.empty() && origin.back() == '/')
        origin.pop_back();
    return origin;
}

} // namespace

std::size_t httpWorkersFor(const engine::SchedulerOptions& scheduling)
{
    return scheduling.maxActive + scheduling.maxQueued + 8;
}

// httplib's Server with its request reader open to the front: the front hands it each whole
// request on a stream of its own (http_front.h).
class CompletionServer::Router : public httplib::Server {
public:
    using httplib::Server::process_request;
    // httplib ends a streamed answer when its listening socket is closed; the front owns
    // the real one, so this one stands for it (a valid value, never used as a socket).
    void setListening(bool listening) { svr_sock_ = listening ? 0 : INVALID_SOCKET; }
};

CompletionServer::CompletionServer(
    ServedModel& model, engine::RequestScheduler& scheduler, ServerOptions options)
    : m_model(model)
    , m_scheduler(scheduler)
    , m_options(std::move(options))
    , m_metrics(
          model.model->kvBlockTokens(), model.model->kvMaxBlocks() * model.model->kvBlockTokens())
    , m_http(std::make_unique<Router>())
    , m_started(std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
                    .count())
{
    // Limits the front enforces; httplib's own copies only shape its answers' headers.
    m_http->set_payload_max_length(m_options.maxBodyBytes);
    m_http->set_keep_alive_timeout(m_options.idleTimeoutSeconds);
    m_http->set_keep_alive_max_count(m_options.maxRequestsPerConnection);
    FrontOptions front;
    front.framing.maxBodyBytes = m_options.maxBodyBytes;
    front.requestTimeout = std::chrono::seconds(m_options.readTimeoutSeconds);
    front.idleTimeout = std::chrono::seconds(m_options.idleTimeoutSeconds);
    front.writeTimeout = std::chrono::seconds(m_options.writeTimeoutSeconds);
    front.maxConnections = m_options.maxConnections;
    front.maxRequestsPerConnection = m_options.maxRequestsPerConnection;
    front.workers = m_options.workers;
    front.maxBufferedBytes
        = std::max<std::size_t>(front.maxBufferedBytes, 4 * m_options.maxBodyBytes);
    m_front = std::make_unique<HttpFront>(
        front,
        [this](httplib::Stream& stream, bool closeConnection, bool& connectionClosed) {
            return m_http->process_request(stream, closeConnection, connectionClosed, nullptr);
        },
        [this](const FrontRefusal& refusal) { logRefusal(refusal); });
    routes();
}

CompletionServer::~CompletionServer() = default;

Result<void> CompletionServer::bind()
{
    auto port = m_front->bind(m_options.host, m_options.port);
    if (!port)
        return port.error();
    m_port = *port;
    return {};
}

void CompletionServer::serve()
{
    m_http->setListening(true);
    m_front->run();
}

void CompletionServer::stop()
{
    m_http->setListening(false); // streamed answers end
    m_front->stop();
}

void CompletionServer::logRefusal(const FrontRefusal& refusal)
{
    m_metrics.countRequest("other", refusal.refusal.status);
    logEvent(refusal.refusal.status >= 500 ? "error" : "warning", "request",
        { { "method", refusal.method }, { "path", refusal.target.substr(0, 200) },
            { "status", refusal.refusal.status }, { "remote", refusal.remote },
            { "error", refusal.refusal.message } });
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

bool CompletionServer::fromAllowedPlace(
    const httplib::Request& request, httplib::Response& response)
{
    const std::string origin
        = request.has_header("Origin") ? normalizedOrigin(request.get_header_value("Origin")) : "";
    const bool listed = !origin.empty()
        && std::find(m_options.allowedOrigins.begin(), m_options.allowedOrigins.end(), origin)
            != m_options.allowedOrigins.end();
    if (listed) {
        response.set_header("Access-Control-Allow-Origin", request.get_header_value("Origin"));
        response.set_header("Vary", "Origin");
    }
    // With keys, a page cannot use the server without one; a public address without keys
    // (--insecure-no-auth) sits behind a proxy that checks who asks.
    if (!m_options.apiKeys.empty() || !isLoopbackName(hostName(m_options.host)))
        return true;
    // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends
    // "Host: evil.example". Browsers always send Host; other clients may leave it out.
    if (request.has_header("Host")) {
        const std::string host = hostName(request.get_header_value("Host"));
        const bool ownName = isLoopbackName(host) || host == hostName(m_options.host);
        const bool originsHost = std::any_of(m_options.allowedOrigins.begin(),
            m_options.allowedOrigins.end(), [&](const std::string& allowed) {
                const auto scheme = allowed.find("://");
                return scheme != std::string::npos && hostName(allowed.substr(scheme + 3)) == host;
            });
        if (!ownName && !originsHost) {
            sendError(response, 403,
                "Host '" + request.get_header_value("Host").substr(0, 100)
                    + "' is not this server's name; without API keys it answers only requests "
                      "addressed to localhost or 127.0.0.1",
                "host_not_allowed");
            return false;
        }
    }
    // A web page's request carries its Origin; the server's own pages are its own origin.
    if (!origin.empty() && !listed) {
        const std::string port = ":" + std::to_string(m_port);
        const bool own = origin == "http://localhost" + port || origin == "http://127.0.0.1" + port
            || origin == "http://[::1]" + port;
        if (!own) {
            sendError(response, 403,
                "requests from web pages of " + origin.substr(0, 100)
                    + " are refused (no API keys: only this machine's own clients); allow an "
                      "origin with --allowed-origin",
                "origin_not_allowed");
            return false;
        }
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
        if (request.path == "/health")
            return Handled::Unhandled; // always answers: no key, no Origin or Host check
        if (!fromAllowedPlace(request, response))
            return Handled::Handled;
        // A browser's CORS preflight carries no key; it is answered by the OPTIONS route.
        if (request.method != "OPTIONS" && !authorized(request, response))
            return Handled::Handled;
        return Handled::Unhandled;
    });

    m_http->Options(R"(/v1/.*)", [](const Request& request, Response& response) {
        response.status = 204;
        if (response.has_header("Access-Control-Allow-Origin")) {
            response.set_header("Access-Control-Allow-Methods", "GET, POST");
            response.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
            response.set_header("Access-Control-Max-Age", "600");
        }
        (void)request;
    });

    m_http->Get("/health", [this](const Request&, Response& response) {
        const auto stats = m_scheduler.stats();
        const nlohmann::json body { { "status", "ok" }, { "model", m_model.id },
            { "queued", stats.queued }, { "active", stats.active } };
        response.set_content(dumpJson(body), kJson);
    });

    m_http->Get("/metrics", [this](const Request&, Response& response) {
        response.set_content(m_metrics.render(m_scheduler.stats(), m_model.model->expertLoad()),
            "text/plain; version=0.0.4; charset=utf-8");
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
              } else if (response.status == 414) {
                  message = "the request line is longer than 8192 bytes";
                  code = "uri_too_long";
              } else if (response.status == 400) {
                  message = "the HTTP request could not be read";
                  code = "bad_request";
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
        runBeforeRequestLogLine();
        nlohmann::json fields = requestLog();
        // A request whose client left before its answer was whole counts as 499 (nginx's
        // "client closed request"), whatever status line had been sent.
        const int status = fields.contains("cancelled") ? 499 : response.status;
        m_metrics.countRequest(
            generation || request.path == "/v1/models" ? request.path : "other", status);
        fields["method"] = request.method;
        fields["path"] = request.path;
        fields["status"] = status;
        if (status != response.status)
            fields["sent_status"] = response.status;
        fields["remote"] = request.remote_addr;
        fields["ms"] = requestMilliseconds();
        logEvent(status >= 500 ? "error" : (status >= 400 ? "warning" : "info"), "request",
            std::move(fields));
        startRequestLog(); // a request that fails before routing must not log this one's fields
    });
}

} // namespace cw::server
