#include "app/server/client_connection.h"

#include <poll.h>
#include <sys/socket.h>

namespace cw::server {

namespace {

struct Current {
    int fd = -1;
    ClientConnection::Clock::time_point requestArrived;
    bool* halfClosed = nullptr;
};

thread_local Current t_current;

} // namespace

ClientConnection::Scope::Scope(int fd, Clock::time_point requestArrived, bool& halfClosed)
{
    t_current = { fd, requestArrived, &halfClosed };
}

ClientConnection::Scope::~Scope()
{
    t_current = {};
}

ClientConnection ClientConnection::current()
{
    ClientConnection connection;
    connection.m_fd = t_current.fd;
    connection.m_requestArrived = t_current.requestArrived;
    connection.m_halfClosed = t_current.halfClosed;
    return connection;
}

bool ClientConnection::hasLeft() const
{
    if (m_fd < 0)
        return false;
    pollfd p { m_fd, POLLIN | POLLRDHUP, 0 };
    if (::poll(&p, 1, 0) <= 0)
        return false;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
        return true; // reset, or both directions closed
    char byte;
    const ssize_t n = ::recv(m_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n != 0)
        return false; // a next request waiting (or nothing to read after all)
    if (m_halfClosed && *m_halfClosed)
        return false;
    if (Clock::now() - m_requestArrived <= kHalfCloseWindow) {
        if (m_halfClosed)
            *m_halfClosed = true;
        return false;
    }
    return true;
}

} // namespace cw::server
