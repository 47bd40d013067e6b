#include "app/server/client_connection.h"

#include <arpa/inet.h>
#include <cstring>
#include <dirent.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cw::server {

namespace {

// The numeric address and port of a socket address (IPv4 or IPv6).
bool describe(const sockaddr_storage& address, std::string& host, int& port)
{
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(address);
        if (!::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text))
            return false;
        port = ntohs(a.sin_port);
    } else if (address.ss_family == AF_INET6) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(address);
        if (!::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text))
            return false;
        port = ntohs(a.sin6_port);
    } else {
        return false;
    }
    host = text;
    return true;
}

bool matches(int fd, const httplib::Request& request)
{
    sockaddr_storage local {}, remote {};
    socklen_t localSize = sizeof local, remoteSize = sizeof remote;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localSize) != 0
        || ::getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remoteSize) != 0)
        return false;
    std::string localHost, remoteHost;
    int localPort = -1, remotePort = -1;
    return describe(local, localHost, localPort) && describe(remote, remoteHost, remotePort)
        && localPort == request.local_port && remotePort == request.remote_port
        && localHost == request.local_addr && remoteHost == request.remote_addr;
}

} // namespace

ClientConnection ClientConnection::of(const httplib::Request& request)
{
    ClientConnection connection;
    if (request.remote_port < 0 || request.local_port < 0)
        return connection;
    DIR* fds = ::opendir("/proc/self/fd");
    if (!fds)
        return connection;
    const int own = ::dirfd(fds);
    while (const dirent* entry = ::readdir(fds)) {
        char* end = nullptr;
        const long fd = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || fd == own)
            continue;
        struct stat info {};
        if (::fstat(int(fd), &info) != 0 || !S_ISSOCK(info.st_mode))
            continue;
        if (matches(int(fd), request)) {
            connection.m_fd = int(fd);
            break;
        }
    }
    ::closedir(fds);
    return connection;
}

bool ClientConnection::hasLeft() const
{
    if (!m_fd)
        return false;
    pollfd p { *m_fd, POLLIN | POLLRDHUP, 0 };
    if (::poll(&p, 1, 0) <= 0)
        return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
        return true;
    char byte;
    const ssize_t n = ::recv(*m_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0; // an end of stream; > 0 is a next request waiting
}

} // namespace cw::server
