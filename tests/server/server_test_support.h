#pragma once

// What the server tests share: the tiny model served on a loopback port, request bodies,
// an SSE reader and raw socket exchanges.
#include "app/server/completion_server.h"

#include <arpa/inet.h>
#include <chrono>
#include <httplib.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace cw::server::testing {

using nlohmann::json;

inline const char* kModel = CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a";
inline const char* kKey = "test-key-0123456789abcdef";

// A served model, its scheduler and the HTTP server on a thread, for one test suite.
struct RunningServer {
    RunningServer(engine::SchedulerOptions scheduling, server::ServerOptions options)
    {
        engine::ModelOptions modelOptions;
        modelOptions.threads = 1;
        modelOptions.maxSequences = int(scheduling.maxActive + scheduling.prefixCacheEntries + 1);
        auto opened = server::ServedModel::open(kModel, modelOptions, "tiny");
        if (!opened)
            throw std::runtime_error(opened.error().message);
        model = std::move(*opened);
        scheduler = std::make_unique<engine::RequestScheduler>(
            *model->model, *model->tokenizer, scheduling);
        options.port = 0;
        options.workers = server::httpWorkersFor(scheduling);
        http = std::make_unique<server::CompletionServer>(*model, *scheduler, options);
        if (auto bound = http->bind(); !bound)
            throw std::runtime_error(bound.error().message);
        thread = std::thread([this] { http->serve(); });
    }
    ~RunningServer()
    {
        http->stop();
        thread.join();
    }

    httplib::Client client(bool withKey = true) const
    {
        httplib::Client c("127.0.0.1", http->port());
        c.set_read_timeout(30, 0);
        if (withKey)
            c.set_bearer_token_auth(kKey);
        return c;
    }

    std::unique_ptr<server::ServedModel> model;
    std::unique_ptr<engine::RequestScheduler> scheduler;
    std::unique_ptr<server::CompletionServer> http;
    std::thread thread;
};

inline json chatBody(const std::string& user, int maxTokens, bool stream = false)
{
    return { { "model", "tiny" },
        { "messages", json::array({ { { "role", "user" }, { "content", user } } }) },
        { "max_tokens", maxTokens }, { "temperature", 0 }, { "stream", stream } };
}

// The content pieces and the last data object of an SSE answer; `done` when [DONE] came.
struct Events {
    std::string content;
    json last;
    json usage;
    bool done = false;
    int chunks = 0;
};

inline Events readEvents(const std::string& body)
{
    Events out;
    std::size_t at = 0;
    while (at < body.size()) {
        std::size_t end = body.find("\n\n", at);
        if (end == std::string::npos)
            end = body.size();
        const std::string event = body.substr(at, end - at);
        at = end + 2;
        if (event.rfind("data: ", 0) != 0)
            continue;
        const std::string data = event.substr(6);
        if (data == "[DONE]") {
            out.done = true;
            continue;
        }
        const json chunk = json::parse(data);
        ++out.chunks;
        out.last = chunk;
        if (chunk.contains("usage"))
            out.usage = chunk["usage"];
        for (const auto& choice : chunk.value("choices", json::array())) {
            if (choice.contains("delta") && choice["delta"].contains("content"))
                out.content += choice["delta"]["content"].get<std::string>();
        }
    }
    return out;
}

// A new TCP connection to 127.0.0.1:port, or -1.
inline int connectToLoopback(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(std::uint16_t(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Sends raw bytes on a new connection and returns what comes back before the server closes.
inline std::string rawExchange(int port, const std::string& head, std::size_t bodyBytes)
{
    const int fd = connectToLoopback(port);
    if (fd < 0)
        return {};
    ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    // Sends the body as curl does: until the server answers (then its answer is read, not
    // lost to the reset a close with unread bytes causes) or the body is all sent.
    const std::string block(1 << 16, 'x');
    std::string reply;
    char buffer[4096];
    for (std::size_t sent = 0; sent < bodyBytes;) {
        pollfd p { fd, POLLIN, 0 };
        if (::poll(&p, 1, 0) > 0)
            break;
        const auto n
            = ::send(fd, block.data(), std::min(block.size(), bodyBytes - sent), MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += std::size_t(n);
    }
    // Until the whole answer is in (the connection may stay open for keep-alive).
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
        reply.append(buffer, std::size_t(n));
        const auto headEnd = reply.find("\r\n\r\n");
        const auto length = reply.find("Content-Length: ");
        if (headEnd != std::string::npos && length != std::string::npos && length < headEnd
            && reply.size() >= headEnd + 4 + std::stoul(reply.substr(length + 16)))
            break;
    }
    ::close(fd);
    return reply;
}

} // namespace cw::server::testing
