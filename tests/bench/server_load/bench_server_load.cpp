// bench_server_load [--model PATH | --url URL] [--clients 32] [--requests 256]
//                   [--max-tokens 64] [--parallel 32] [--api-key KEY] [--threads N]
//                   [--slowloris 0] [--oversized 0]
// N concurrent clients stream /v1/chat/completions until R requests are answered; every
// answer is checked (each event parses, content arrives, a finish_reason, usage, [DONE]).
// Prints one JSON object: requests/s, generated tokens/s, p50/p95/p99 time to first token
// (request sent to first content byte, as a client sees it) and the latency of GET /health,
// probed every 50 ms on a new connection. Without --url the server runs in this process on a
// free loopback port with --model (default: the tiny golden model).
// With --slowloris S or --oversized O the honest load runs twice, alone and then beside S
// connections that drip a header line every second (reconnecting when refused) and O clients
// that keep sending bodies over the limit (64 MiB announced, or chunked without end; ten
// attempts a second each, at most --oversized-mibps each); the object then holds both runs and
// their ratios.
#include "app/server/completion_server.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <httplib.h>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Outcome {
    bool ok = false;
    double ttftSeconds = 0.0;
    std::int64_t completionTokens = 0;
    std::string error;
};

// One streaming request, checked as it arrives.
Outcome streamOnce(httplib::Client& client, const std::string& body)
{
    Outcome out;
    std::string buffer, content;
    bool done = false, finished = false, usage = false;
    const auto sent = Clock::now();
    httplib::Request request;
    request.method = "POST";
    request.path = "/v1/chat/completions";
    request.body = body;
    request.set_header("Content-Type", "application/json");
    request.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
        buffer.append(data, n);
        for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
            const std::string event = buffer.substr(0, end);
            buffer.erase(0, end + 2);
            if (event.rfind("data: ", 0) != 0)
                continue;
            const std::string data = event.substr(6);
            if (data == "[DONE]") {
                done = true;
                continue;
            }
            const json chunk = json::parse(data, nullptr, false);
            if (chunk.is_discarded() || chunk.contains("error")) {
                out.error = "bad event: " + data.substr(0, 120);
                return false;
            }
            if (chunk.contains("usage")) {
                usage = true;
                out.completionTokens = chunk["usage"].value("completion_tokens", 0);
            }
            for (const auto& choice : chunk["choices"]) {
                const std::string piece = choice["delta"].value("content", "");
                if (!piece.empty() && content.empty())
                    out.ttftSeconds = std::chrono::duration<double>(Clock::now() - sent).count();
                content += piece;
                finished |= choice["finish_reason"].is_string();
            }
        }
        return true;
    };
    auto response = client.send(request);
    if (!response) {
        out.error = "no response (" + httplib::to_string(response.error()) + ")";
        return out;
    }
    if (response->status != 200) {
        out.error = "HTTP " + std::to_string(response->status);
        return out;
    }
    if (out.error.empty() && !(done && finished && usage && !content.empty()))
        out.error = "incomplete answer";
    out.ok = out.error.empty();
    return out;
}

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const std::size_t i
        = std::min(values.size() - 1, std::size_t(p * double(values.size() - 1) + 0.5));
    return values[i];
}

int connectTo(const std::string& host, int port)
{
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
        return -1;
    int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
        ::close(fd);
        fd = -1;
    }
    ::freeaddrinfo(found);
    return fd;
}

bool sendAll(int fd, const std::string& bytes)
{
    for (std::size_t sent = 0; sent < bytes.size();) {
        const auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        sent += std::size_t(n);
    }
    return true;
}

// The status of an answer that has arrived on fd (0: none, or the connection closed).
int answeredStatus(int fd)
{
    char reply[512] = {};
    const auto n = ::recv(fd, reply, sizeof reply - 1, MSG_DONTWAIT);
    return n > 12 && std::string_view(reply, 9) == "HTTP/1.1 " ? std::atoi(reply + 9) : 0;
}

// Hostile clients beside the honest load, until stopped.
struct Abuse {
    std::string host;
    int port = 0;
    std::string apiKey;
    std::atomic<bool> running { true };
    std::atomic<int> timedOut { 0 }; // slowloris connections answered 408
    std::atomic<int> refused { 0 }; // oversized bodies answered 413
    std::atomic<std::int64_t> oversizedBytes { 0 };
    double mibPerSecond = 0; // each oversized client's pace (0: as fast as the socket takes)
    std::vector<std::thread> threads;

    void slowloris(int connections)
    {
        threads.emplace_back([this, connections] {
            std::vector<int> fds(std::size_t(connections), -1);
            while (running) {
                for (int& fd : fds) {
                    if (fd >= 0) {
                        pollfd p { fd, POLLIN, 0 };
                        if (::poll(&p, 1, 0) > 0) { // answered (408) or closed: again
                            if (answeredStatus(fd) == 408)
                                ++timedOut;
                            ::close(fd);
                            fd = -1;
                        }
                    }
                    if (fd < 0) {
                        fd = connectTo(host, port);
                        if (fd >= 0)
                            sendAll(fd, "GET /health HTTP/1.1\r\nHost: x\r\n");
                    } else {
                        sendAll(fd, "X-Slow: y\r\n");
                    }
                }
                for (int i = 0; i < 20 && running; ++i)
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            for (int fd : fds)
                if (fd >= 0)
                    ::close(fd);
        });
    }

    void oversized(int clients)
    {
        for (int c = 0; c < clients; ++c) {
            threads.emplace_back([this, c] {
                const std::string block(1 << 16, ' ');
                const std::string chunk = "10000\r\n" + block + "\r\n";
                const auto began = Clock::now();
                std::int64_t mine = 0;
                for (int round = 0; running; ++round) {
                    const int fd = connectTo(host, port);
                    if (fd < 0)
                        break;
                    const bool chunked = (round + c) % 2 == 1;
                    sendAll(fd,
                        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                            + (apiKey.empty() ? "" : "Authorization: Bearer " + apiKey + "\r\n")
                            + (chunked ? "Transfer-Encoding: chunked\r\n"
                                       : "Content-Length: 67108864\r\n")
                            + "\r\n");
                    for (int sent = 0; running && sent < 1024; ++sent) {
                        pollfd p { fd, POLLIN, 0 };
                        if (::poll(&p, 1, 0) > 0)
                            break;
                        if (!sendAll(fd, chunked ? chunk : block))
                            break;
                        oversizedBytes += std::int64_t(block.size());
                        mine += std::int64_t(block.size());
                        if (mibPerSecond > 0) // a remote client's link: bytes at its pace
                            std::this_thread::sleep_until(began
                                + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(
                                        double(mine) / (mibPerSecond * double(1 << 20)))));
                    }
                    pollfd p { fd, POLLIN, 0 };
                    if (::poll(&p, 1, 2000) > 0 && answeredStatus(fd) == 413)
                        ++refused;
                    ::close(fd);
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                }
            });
        }
    }

    void stop()
    {
        running = false;
        for (auto& t : threads)
            t.join();
        threads.clear();
    }
};

// GET /health on a new connection every 50 ms, timed; a failed probe counts as 10 s.
struct HealthProbe {
    std::atomic<bool> running { true };
    std::vector<double> seconds;
    int failed = 0;
    std::thread thread;

    void start(std::function<std::unique_ptr<httplib::Client>()> makeClient)
    {
        thread = std::thread([this, makeClient] {
            while (running) {
                auto client = makeClient();
                client->set_read_timeout(10, 0);
                const auto start = Clock::now();
                auto r = client->Get("/health");
                const double took = std::chrono::duration<double>(Clock::now() - start).count();
                if (r && r->status == 200) {
                    seconds.push_back(took);
                } else {
                    ++failed;
                    seconds.push_back(10.0);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        });
    }
    void stop()
    {
        running = false;
        thread.join();
    }
};

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Load benchmark of clausewright-server: concurrent streaming clients" };
    std::string modelPath = CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a";
    std::string url, apiKey, modelName;
    int clients = 32, requests = 256, maxTokens = 64, threads = 0;
    std::size_t parallel = 32;
    app.add_option("--model", modelPath, "model to serve in this process (without --url)");
    app.add_option("--url", url, "a running server instead, e.g. http://127.0.0.1:8642");
    app.add_option("--api-key", apiKey, "bearer key for --url");
    app.add_option("--model-name", modelName, "\"model\" to send (default: the server's first)");
    app.add_option("--clients", clients, "concurrent streaming clients (default 32)");
    app.add_option("--requests", requests, "answers to collect in total (default 256)");
    app.add_option("--max-tokens", maxTokens, "max_tokens per answer (default 64)");
    app.add_option("--parallel", parallel, "in-process server: sequences decoded together");
    app.add_option("--threads", threads, "in-process server: CPU threads (0: all)");
    int slowloris = 0, oversized = 0;
    double oversizedMibps = 0;
    app.add_option("--slowloris", slowloris,
        "connections that drip a header line every second beside the load (a second run)");
    app.add_option("--oversized", oversized,
        "clients that keep sending bodies over the limit beside the load (a second run)");
    app.add_option("--oversized-mibps", oversizedMibps,
        "each oversized client's send rate in MiB/s (default 0: as fast as the socket takes; "
        "on loopback that is this machine's own CPU, not an attacker's link)");
    CLI11_PARSE(app, argc, argv);

    std::unique_ptr<cw::server::ServedModel> served;
    std::unique_ptr<cw::engine::RequestScheduler> scheduler;
    std::unique_ptr<cw::server::CompletionServer> server;
    std::thread serving;
    std::string host = "127.0.0.1";
    int port = 0;
    if (url.empty()) {
        cw::engine::SchedulerOptions scheduling;
        scheduling.maxActive = parallel;
        scheduling.maxQueued = std::size_t(clients) + 8;
        cw::engine::ModelOptions modelOptions;
        modelOptions.threads = threads;
        modelOptions.maxSequences = int(scheduling.maxActive + scheduling.prefixCacheEntries + 1);
        auto opened = cw::server::ServedModel::open(modelPath, modelOptions);
        if (!opened) {
            std::fprintf(stderr, "bench_server_load: %s\n", opened.error().message.c_str());
            return 1;
        }
        served = std::move(*opened);
        scheduler = std::make_unique<cw::engine::RequestScheduler>(
            *served->model, *served->tokenizer, scheduling);
        cw::server::ServerOptions options;
        options.port = 0;
        options.workers = cw::server::httpWorkersFor(scheduling);
        server = std::make_unique<cw::server::CompletionServer>(*served, *scheduler, options);
        if (auto bound = server->bind(); !bound) {
            std::fprintf(stderr, "bench_server_load: %s\n", bound.error().message.c_str());
            return 1;
        }
        port = server->port();
        modelName = served->id;
        serving = std::thread([&] { server->serve(); });
    }
    auto makeClient = [&] {
        auto client = url.empty() ? std::make_unique<httplib::Client>(host, port)
                                  : std::make_unique<httplib::Client>(url);
        client->set_read_timeout(600, 0);
        if (!apiKey.empty())
            client->set_bearer_token_auth(apiKey.c_str());
        return client;
    };

    if (!url.empty()) {
        // http://host:port for the hostile clients' raw sockets.
        const auto scheme = url.find("://");
        const std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
        const auto colon = rest.rfind(':');
        host = rest.substr(0, colon);
        port = colon == std::string::npos ? 80 : std::atoi(rest.c_str() + colon + 1);
    }

    // One honest run: every client streams until `requests` answers are in.
    auto honestRun = [&]() {
        std::atomic<int> next { 0 };
        std::mutex mutex;
        std::vector<double> ttfts;
        std::vector<std::string> errors;
        std::int64_t tokens = 0;
        HealthProbe health;
        health.start(makeClient);
        const auto start = Clock::now();
        std::vector<std::thread> workers;
        for (int c = 0; c < clients; ++c) {
            workers.emplace_back([&, c] {
                auto client = makeClient();
                for (int i; (i = next++) < requests;) {
                    json body { { "messages",
                                    { { { "role", "system" },
                                          { "content", "You review contracts. Answer briefly." } },
                                        { { "role", "user" },
                                            { "content",
                                                "Question " + std::to_string(i) + " from client "
                                                    + std::to_string(c)
                                                    + ": is there a liability cap?" } } } },
                        { "max_tokens", maxTokens }, { "temperature", 0.7 }, { "seed", i },
                        { "stream", true } };
                    if (!modelName.empty())
                        body["model"] = modelName;
                    const Outcome o = streamOnce(*client, body.dump());
                    std::lock_guard lock(mutex);
                    if (o.ok) {
                        ttfts.push_back(o.ttftSeconds);
                        tokens += o.completionTokens;
                    } else {
                        errors.push_back(o.error);
                    }
                }
            });
        }
        for (auto& w : workers)
            w.join();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        health.stop();
        return json { { "completed", ttfts.size() }, { "failed", errors.size() },
            { "first_error", errors.empty() ? "" : errors.front() }, { "seconds", seconds },
            { "requests_per_second", double(ttfts.size()) / seconds },
            { "generated_tokens_per_second", double(tokens) / seconds },
            { "ttft_p50_ms", percentile(ttfts, 0.50) * 1000.0 },
            { "ttft_p95_ms", percentile(ttfts, 0.95) * 1000.0 },
            { "ttft_p99_ms", percentile(ttfts, 0.99) * 1000.0 },
            { "health_probes", health.seconds.size() }, { "health_failed", health.failed },
            { "health_p50_ms", percentile(health.seconds, 0.50) * 1000.0 },
            { "health_p99_ms", percentile(health.seconds, 0.99) * 1000.0 },
            { "health_max_ms", percentile(health.seconds, 1.0) * 1000.0 } };
    };

    json report { { "clients", clients }, { "requests", requests }, { "max_tokens", maxTokens },
        { "server", url.empty() ? "in-process " + modelPath : url } };
    const json alone = honestRun();
    bool ok = alone["failed"] == 0 && alone["health_failed"] == 0;
    if (slowloris == 0 && oversized == 0) {
        report.update(alone);
    } else {
        Abuse abuse;
        abuse.host = host;
        abuse.port = port;
        abuse.apiKey = apiKey;
        abuse.mibPerSecond = oversizedMibps;
        abuse.slowloris(slowloris);
        abuse.oversized(oversized);
        std::this_thread::sleep_for(std::chrono::seconds(1)); // the hostile clients settle in
        const json attacked = honestRun();
        abuse.stop();
        ok = ok && attacked["failed"] == 0 && attacked["health_failed"] == 0;
        report["slowloris"] = slowloris;
        report["oversized"] = oversized;
        report["oversized_mibps"] = oversizedMibps;
        report["no_abuse"] = alone;
        report["abuse"] = attacked;
        report["abuse"]["slowloris_answered_408"] = abuse.timedOut.load();
        report["abuse"]["oversized_answered_413"] = abuse.refused.load();
        report["abuse"]["oversized_mib_sent"]
            = double(abuse.oversizedBytes.load()) / double(1 << 20);
        auto ratio = [&](const char* key) {
            const double base = alone[key].get<double>();
            return base > 0 ? attacked[key].get<double>() / base : 0.0;
        };
        report["abuse_over_no_abuse"] = { { "ttft_p99", ratio("ttft_p99_ms") },
            { "requests_per_second", ratio("requests_per_second") },
            { "generated_tokens_per_second", ratio("generated_tokens_per_second") } };
    }
    if (server) {
        server->stop();
        serving.join();
    }
    std::printf("%s\n", report.dump(2).c_str());
    return ok ? 0 : 1;
}
