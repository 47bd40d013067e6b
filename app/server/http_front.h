#pragma once

// The server's front door: one thread owns every connection while its request arrives (epoll,
// non-blocking sockets) and gives a worker only a request that is already whole. So a client
// that sends slowly, or not at all, costs a file descriptor and a buffer, never a thread:
//   - a request must be whole within `requestTimeout` of its first byte (the clock does not
//     restart when a byte arrives) and a connection must start one within `idleTimeout`;
//   - framing is checked before any handler runs (request_framing.h): body limits hold for
//     chunked bodies too, two framings are refused;
//   - idle keep-alive connections wait here, not on a worker, and at most
//     `maxRequestsPerConnection` requests use one connection;
//   - at `maxConnections`, a new connection closes the one that has been waiting longest for
//     its request to arrive;
//   - GET requests (/health, /metrics, /v1/models) have workers of their own, so a full
//     generation pool never delays them.
// httplib (Debian's 0.11) still parses the head, routes and writes the answer: a worker
// calls Server::process_request on a Stream that reads the buffered request.

#include "app/server/request_framing.h"
#include "engine/common/result.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace httplib {
class Stream;
}

namespace cw::server {

struct FrontOptions {
    FramingLimits framing;
    std::chrono::milliseconds requestTimeout { 10000 };
    std::chrono::milliseconds idleTimeout { 5000 };
    std::chrono::milliseconds writeTimeout { 30000 };
    std::size_t maxConnections = 1024;
    std::size_t maxRequestsPerConnection = 100;
    std::size_t workers = 80; // POST handlers: above running + queued generations
    std::size_t quickWorkers = 2; // GET handlers
    std::size_t maxBufferedBytes = 256u << 20; // requests being received, all connections
};

// What the front tells the server about a request it answered itself (for the log line).
struct FrontRefusal {
    FramingRefusal refusal;
    std::string method, target, remote;
};

class HttpFront {
public:
    // Answers one whole request on `stream` (httplib's process_request); false: close.
    using Serve = std::function<bool(
        httplib::Stream& stream, bool closeConnection, bool& connectionClosed)>;
    using Refused = std::function<void(const FrontRefusal&)>;

    HttpFront(FrontOptions options, Serve serve, Refused refused);
    ~HttpFront();

    // Listens on host:port (port 0: any free port); the port it got.
    Result<int> bind(const std::string& host, int port);
    // Serves until stop(); answers in progress are cut (their generations cancel).
    void run();
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace cw::server
