// bench_server_load [--model PATH | --url URL] [--clients 32] [--requests 256]
//                   [--max-tokens 64] [--parallel 32] [--api-key KEY] [--threads N]
// N concurrent clients stream /v1/chat/completions until R requests are answered; every
// answer is checked (each event parses, content arrives, a finish_reason, usage, [DONE]).
// Prints one JSON object: requests/s, generated tokens/s, and p50/p95 time to first token
// (request sent to first content byte, as a client sees it). Without --url the server runs in
// this process on a free loopback port with --model (default: the tiny golden model).
#include "app/server/completion_server.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <httplib.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

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

    std::atomic<int> next { 0 };
    std::mutex mutex;
    std::vector<double> ttfts;
    std::vector<std::string> errors;
    std::int64_t tokens = 0;
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int c = 0; c < clients; ++c) {
        workers.emplace_back([&, c] {
            auto client = makeClient();
            for (int i; (i = next++) < requests;) {
                json body {
                    { "messages",
                        { { { "role", "system" },
                              { "content", "You review contracts. Answer briefly." } },
                            { { "role", "user" },
                                { "content",
                                    "Question " + std::to_string(i) + " from client "
                                        + std::to_string(c) + ": is there a liability cap?" } } } },
                    { "max_tokens", maxTokens }, { "temperature", 0.7 }, { "seed", i },
                    { "stream", true }
                };
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
    if (server) {
        server->stop();
        serving.join();
    }
    const json report { { "clients", clients }, { "requests", requests },
        { "completed", ttfts.size() }, { "failed", errors.size() },
        { "first_error", errors.empty() ? "" : errors.front() }, { "max_tokens", maxTokens },
        { "seconds", seconds }, { "requests_per_second", double(ttfts.size()) / seconds },
        { "generated_tokens_per_second", double(tokens) / seconds },
        { "ttft_p50_ms", percentile(ttfts, 0.50) * 1000.0 },
        { "ttft_p95_ms", percentile(ttfts, 0.95) * 1000.0 },
        { "server", url.empty() ? "in-process " + modelPath : url } };
    std::printf("%s\n", report.dump(2).c_str());
    return errors.empty() ? 0 : 1;
}
