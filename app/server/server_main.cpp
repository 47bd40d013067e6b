// clausewright-server: an OpenAI-compatible HTTP API on one model (engine only, no Qt).
//   clausewright-server --model PATH [--host 127.0.0.1] [--port 8642] [--api-key-file F] ...
// Logs one JSON object per line on stderr; SIGINT or SIGTERM stops it (running answers are
// cancelled).
#include "app/cli/cli_usage.h"
#include "app/server/completion_server.h"
#include "app/server/server_log.h"
#include "engine/runtime/precision.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <csignal>
#include <pthread.h>
#include <sys/resource.h>
#include <thread>

namespace {

bool isLoopback(const std::string& host)
{
    return host == "127.0.0.1" || host == "::1" || host == "localhost"
        || host.rfind("127.", 0) == 0;
}

int fail(const std::string& message)
{
    cw::server::logEvent("error", "startup_failed", { { "message", message } });
    return 1;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "clausewright-server: an OpenAI-compatible API (/v1/chat/completions, "
                   "/v1/completions, /v1/models, /health, /metrics) on one model" };
    std::string modelPath, modelName, keyFile;
    cw::engine::ModelOptions modelOptions;
    cw::server::ServerOptions options;
    cw::engine::SchedulerOptions scheduling;
    std::size_t bodyMiB = 4;
    bool insecure = false;
    app.add_option("--model", modelPath, "GGUF file or Hugging Face folder")->required();
    app.add_option("--model-name", modelName,
        "the id clients give as \"model\" (default: the file or folder name)");
    app.add_option("--host", options.host, "address to listen on (default 127.0.0.1)");
    app.add_option("--port", options.port, "port (default 8642; 0: any free port)");
    app.add_option("--api-key-file", keyFile,
        "file of accepted API keys, one a line, mode 0600 (clients send Authorization: Bearer "
        "KEY)");
    app.add_flag("--insecure-no-auth", insecure,
        "allow listening on a non-loopback address without --api-key-file");
    app.add_option("--device", modelOptions.device, "cpu, cuda, cuda:N or auto (default cpu)");
    cw::cli::addGpuMemoryOption(app, modelOptions.gpuMemoryGiB);
    app.add_option("--threads", modelOptions.threads, "CPU threads (0: all)");
    std::string precision = "bf16";
    app.add_option(
           "--precision", precision, "arithmetic: f32 (the reference), tf32 or bf16 (fastest)")
        ->check(CLI::IsMember({ "f32", "tf32", "bf16" }));
    app.add_option("--context", modelOptions.contextLength,
        "tokens per sequence (0: the model's, capped on a GPU)");
    app.add_option("--parallel", scheduling.maxActive,
        "requests decoded together (continuous batching; default 8)");
    app.add_option("--queue", scheduling.maxQueued,
        "requests that may wait beyond --parallel; more get 429 (default 64)");
    app.add_option("--prefix-cache", scheduling.prefixCacheEntries,
        "shared prompt prefixes kept prefilled (default 4; 0: off)");
    app.add_option("--step-tokens", scheduling.stepTokens,
        "tokens one model step feeds at most, decodes first, then prompt chunks (default 0: the "
        "model's prefill chunk, 4,096 on a GPU, 512 on the CPU)");
    app.add_option(
        "--max-body-mib", bodyMiB, "largest request body in MiB; more gets 413 (default 4)");
    app.add_option("--max-request-tokens", options.maxRequestTokens,
        "prompt + max_tokens per request; more gets 413 (default: the context)");
    app.add_option("--read-timeout", options.readTimeoutSeconds,
        "seconds a request's head and body may take to arrive, from its first byte; more gets "
        "408 (default 10)");
    app.add_option("--write-timeout", options.writeTimeoutSeconds,
        "seconds a client may stop reading before it is dropped (default 30)");
    app.add_option("--idle-timeout", options.idleTimeoutSeconds,
        "seconds an idle keep-alive connection stays open (default 5)");
    app.add_option("--max-request-seconds", options.maxRequestSeconds,
        "a generation still running after this is cancelled (default 600)");
    app.add_option("--max-connections", options.maxConnections,
        "connections open at once; past it a new one closes the one waiting longest for its "
        "request (default 1024)");
    app.add_option("--allowed-origin", options.allowedOrigins,
        "without --api-key-file, also answer web pages of this origin (http://host:port; "
        "repeatable); they get CORS headers too");
    app.set_version_flag("--version", std::string("clausewright-server ") + CW_VERSION);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    options.maxBodyBytes = bodyMiB << 20;
    for (std::string& origin : options.allowedOrigins) {
        for (char& c : origin)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        while (!origin.empty() && origin.back() == '/')
            origin.pop_back();
        if (origin.rfind("http://", 0) != 0 && origin.rfind("https://", 0) != 0)
            return fail("--allowed-origin " + origin
                + ": an origin is scheme://host[:port], e.g. http://localhost:3000");
    }
    options.workers = cw::server::httpWorkersFor(scheduling);

    if (!keyFile.empty()) {
        auto keys = cw::server::ApiKeys::fromFile(keyFile);
        if (!keys)
            return fail(keys.error().message);
        options.apiKeys = std::move(*keys);
    } else if (!isLoopback(options.host) && !insecure) {
        return fail("listening on " + options.host
            + " without --api-key-file would let anyone who can reach it use the model; give "
              "--api-key-file (or --insecure-no-auth behind an authenticating proxy)");
    } else if (!isLoopback(options.host)) {
        cw::server::logEvent("warning", "no_authentication",
            { { "message",
                "--insecure-no-auth: listening on " + options.host
                    + " without API keys; anyone who can reach this address can use the model "
                      "unless a proxy in front checks who asks" } });
    }

    // Each connection is a descriptor: --max-connections needs more than the usual soft limit
    // of 1024, so it is raised to the hard one.
    rlimit files {};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }

    // SIGINT/SIGTERM are taken by one thread with sigwait, so no handler runs inside httplib
    // or the engine; every thread started below inherits the blocked mask.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    // Each running request, each cached prefix and the one being built hold a state slot.
    if (auto ok = cw::engine::applyPrecision(modelOptions, precision); !ok) {
        std::fprintf(stderr, "clausewright-server: %s\n", ok.error().message.c_str());
        return 2;
    }
    modelOptions.maxSequences = int(scheduling.maxActive + scheduling.prefixCacheEntries + 1);
    cw::server::logEvent(
        "info", "loading_model", { { "model", modelPath }, { "device", modelOptions.device } });
    auto served = cw::server::ServedModel::open(modelPath, modelOptions, modelName);
    if (!served)
        return fail(served.error().message);
    auto& model = **served;
    if (!model.chatTemplate.warning().empty())
        cw::server::logEvent(
            "warning", "chat_template", { { "message", model.chatTemplate.warning() } });

    cw::engine::RequestScheduler scheduler(*model.model, *model.tokenizer, scheduling);
    cw::server::CompletionServer server(model, scheduler, options);
    if (auto bound = server.bind(); !bound)
        return fail(bound.error().message);
    std::thread signals([&] {
        int signal = 0;
        sigwait(&stopSignals, &signal);
        cw::server::logEvent("info", "stopping", { { "signal", signal } });
        server.stop();
    });
    cw::server::logEvent("info", "listening",
        { { "host", options.host }, { "port", server.port() }, { "model", model.id },
            { "device", model.model->deviceName() }, { "context", model.model->contextLength() },
            { "parallel", scheduling.maxActive }, { "api_keys", options.apiKeys.size() } });
    server.serve();
    // serve() also returns when listening fails: wake the signal thread so it can be joined.
    pthread_kill(signals.native_handle(), SIGTERM);
    signals.join();
    cw::server::logEvent("info", "stopped");
    return 0;
}
