#pragma once

// Whether the client of a request that is answered whole (not streamed) is still there.
// cpp-httplib 0.11 (Debian 12) gives a handler no access to its connection, and a handler
// that waits for a long generation never writes until it ends, so a client that hung up
// would keep its generation running to the end. The request's own socket is found by its
// two addresses (local and remote address and port are unique per TCP connection), and
// polled for an end of stream while the answer is written.

#include <optional>

namespace httplib {
struct Request;
}

namespace cw::server {

class ClientConnection {
public:
    // The connection of `request`; unknown (never "left") when its socket is not found.
    static ClientConnection of(const httplib::Request& request);

    // True once the client closed its side or the connection broke. A client that sends
    // another request on the same connection (pipelining) has not left.
    bool hasLeft() const;

private:
    std::optional<int> m_fd;
};

} // namespace cw::server
