#pragma once

// Whether the client of the request this thread is answering is still there. A handler that
// waits for a whole (not streamed) answer writes nothing until it ends, so it polls this to
// stop a generation nobody will read. The front (http_front.h) opens a Scope around each
// request it hands to a worker.
//
// End of input alone is ambiguous: a client that hung up and one that only shut its sending
// side after the request (shutdown(SHUT_WR), as some proxies do) look the same to the server.
// An end of input that comes with the request, or within kHalfCloseWindow of it, is taken as
// a half-close and the answer is still sent; one that comes later, while the client waits,
// as the client leaving.

#include <chrono>

namespace cw::server {

class ClientConnection {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr auto kHalfCloseWindow = std::chrono::milliseconds(100);

    // The connection of the request this thread answers; unknown (never "left") outside one.
    static ClientConnection current();

    // True once the client closed its side (see above) or the connection broke. A client
    // that sends its next request on the same connection (pipelining) has not left.
    bool hasLeft() const;

    // Makes `fd` this thread's connection while it lives. `halfClosed` is set when an end of
    // input is taken as a half-close (the connection then closes after the answer).
    class Scope {
    public:
        Scope(int fd, Clock::time_point requestArrived, bool& halfClosed);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
    };

private:
    int m_fd = -1;
    Clock::time_point m_requestArrived;
    bool* m_halfClosed = nullptr;
};

} // namespace cw::server
