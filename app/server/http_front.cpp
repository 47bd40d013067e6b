#include "app/server/http_front.h"

#include "app/server/client_connection.h"
#include "app/server/openai_responses.h"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <httplib.h>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <set>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace cw::server {

namespace {

using Clock = std::chrono::steady_clock;

// A refused request's connection is read and dropped for this long before it closes, so that
// the client reads the answer rather than a reset (a close with unread bytes sends RST).
constexpr auto kLinger = std::chrono::seconds(2);
constexpr std::size_t kReadBlock = 64u << 10;
// Read at most this much from one connection per wake-up: a client that sends as fast as
// the network allows must not keep the front from the others (epoll reports it again).
constexpr std::size_t kReadPerWake = 256u << 10;
// A refused client that keeps sending is dropped after this much, linger or not.
constexpr std::size_t kLingerBytes = 1u << 20;

const char* reasonPhrase(int status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 414:
        return "URI Too Long";
    case 417:
        return "Expectation Failed";
    case 431:
        return "Request Header Fields Too Large";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    }
    return "Error";
}

void describeAddress(const sockaddr_storage& address, std::string& host, int& port)
{
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(address);
        ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
        port = ntohs(a.sin_port);
    } else if (address.ss_family == AF_INET6) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(address);
        ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
        port = ntohs(a.sin6_port);
    }
    host = text;
}

struct Connection {
    enum class Phase { Reading, Working, Lingering };
    int fd = -1;
    std::string remoteHost, localHost;
    int remotePort = 0, localPort = 0;
    Phase phase = Phase::Reading;
    std::string received; // from the start of the request being read
    std::optional<RequestFramer> framer;
    bool started = false; // a byte of the current request arrived
    bool continueSent = false;
    bool endOfInput = false; // the client shut its sending side
    Clock::time_point since; // the current phase began (the eviction order)
    Clock::time_point deadline;
    std::size_t served = 0;
    std::size_t discarded = 0; // bytes read and dropped while lingering
};

// The buffered request for httplib to read, and the socket it writes the answer to.
class ExchangeStream final : public httplib::Stream {
public:
    ExchangeStream(
        const Connection& connection, std::string request, std::chrono::milliseconds writeTimeout)
        : m_connection(connection)
        , m_request(std::move(request))
        , m_writeTimeout(writeTimeout)
    {
    }

    bool is_readable() const override { return m_at < m_request.size(); }
    bool is_writable() const override
    {
        if (m_failed)
            return false;
        pollfd p { m_connection.fd, POLLOUT, 0 };
        const int ready = ::poll(&p, 1, int(m_writeTimeout.count()));
        // POLLHUP: both directions are gone. A client that only shut its sending side (a
        // half-close) still reads its answer, so end of input is no reason to stop.
        return ready > 0 && !(p.revents & (POLLERR | POLLHUP | POLLNVAL));
    }
    ssize_t read(char* ptr, size_t size) override
    {
        const std::size_t n = std::min(size, m_request.size() - m_at);
        std::memcpy(ptr, m_request.data() + m_at, n);
        m_at += n;
        return ssize_t(n);
    }
    ssize_t write(const char* ptr, size_t size) override
    {
        std::size_t sent = 0;
        const auto deadline = Clock::now() + m_writeTimeout;
        while (sent < size && !m_failed) {
            const ssize_t n
                = ::send(m_connection.fd, ptr + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                sent += std::size_t(n);
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - Clock::now());
                pollfd p { m_connection.fd, POLLOUT, 0 };
                if (left.count() > 0 && ::poll(&p, 1, int(left.count())) > 0
                    && !(p.revents & (POLLERR | POLLHUP | POLLNVAL)))
                    continue;
            }
            m_failed = true; // the client stopped reading, or is gone
        }
        return m_failed ? -1 : ssize_t(size);
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override
    {
        ip = m_connection.remoteHost;
        port = m_connection.remotePort;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override
    {
        ip = m_connection.localHost;
        port = m_connection.localPort;
    }
    socket_t socket() const override { return m_connection.fd; }
    bool failed() const { return m_failed; }

private:
    const Connection& m_connection;
    std::string m_request;
    std::size_t m_at = 0;
    std::chrono::milliseconds m_writeTimeout;
    mutable bool m_failed = false;
};

} // namespace

struct HttpFront::Impl {
    FrontOptions options;
    Serve serve;
    Refused refused;
    int listenFd = -1;
    int epollFd = -1;
    int wakeFd = -1;
    std::atomic<bool> stopping { false };
    std::unordered_map<int, std::shared_ptr<Connection>> connections; // front thread only
    std::size_t buffered = 0; // bytes in `received` of reading connections

    std::mutex mutex; // guards the two below
    // From workers: the connection and whether it reads a next request (else it closes).
    std::vector<std::pair<std::shared_ptr<Connection>, bool>> returned;
    std::set<int> working; // fds a worker holds (cut at stop)

    std::unique_ptr<httplib::ThreadPool> workers;
    std::unique_ptr<httplib::ThreadPool> quickWorkers;

    void watch(int fd, std::uint32_t events, int op)
    {
        epoll_event e {};
        e.events = events;
        e.data.fd = fd;
        ::epoll_ctl(epollFd, op, fd, &e);
    }

    void wake()
    {
        const std::uint64_t one = 1;
        [[maybe_unused]] const auto n = ::write(wakeFd, &one, sizeof one);
    }

    void close(Connection& c)
    {
        ::epoll_ctl(epollFd, EPOLL_CTL_DEL, c.fd, nullptr);
        buffered -= std::min(buffered, c.received.size());
        ::close(c.fd);
        connections.erase(c.fd);
    }

    void startReading(Connection& c, Clock::time_point now)
    {
        c.phase = Connection::Phase::Reading;
        c.framer.emplace(options.framing);
        c.started = !c.received.empty();
        c.continueSent = false;
        c.since = now;
        c.deadline = now + (c.started ? options.requestTimeout : options.idleTimeout);
    }

    // Answers a request the front refuses, then lingers so the client reads the answer.
    void refuse(Connection& c, const FramingRefusal& refusal, Clock::time_point now)
    {
        FrontRefusal report { refusal, {}, {}, c.remoteHost };
        if (c.framer && c.framer->state() != RequestFramer::State::NeedMore) {
            report.method = c.framer->method();
            report.target = c.framer->target();
        }
        refused(report);
        const std::string body = dumpJson(errorJson(refusal.status, refusal.message, refusal.code));
        std::string answer = "HTTP/1.1 " + std::to_string(refusal.status) + " "
            + reasonPhrase(refusal.status) + "\r\nContent-Type: application/json\r\n"
            + (refusal.status == 503 ? "Retry-After: 1\r\n" : "") + "Content-Length: "
            + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
        // Small enough for the socket's buffer; a client that cannot take it loses it.
        [[maybe_unused]] const auto n
            = ::send(c.fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(c.fd, SHUT_WR);
        buffered -= std::min(buffered, c.received.size());
        c.received.clear();
        c.received.shrink_to_fit();
        c.phase = Connection::Phase::Lingering;
        c.deadline = now + kLinger;
        if (c.endOfInput)
            close(c);
    }

    void accept(Clock::time_point now)
    {
        for (;;) {
            sockaddr_storage remote {};
            socklen_t size = sizeof remote;
            const int fd = ::accept4(listenFd, reinterpret_cast<sockaddr*>(&remote), &size,
                SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                // Out of descriptors: make room, or give the workers a moment (the listening
                // socket stays readable, so returning at once would spin).
                if (errno == EMFILE || errno == ENFILE) {
                    if (evictOne())
                        continue;
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
                return;
            }
            if (connections.size() >= options.maxConnections && !evictOne()) {
                ::close(fd);
                continue;
            }
            int yes = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
            auto c = std::make_shared<Connection>();
            c->fd = fd;
            describeAddress(remote, c->remoteHost, c->remotePort);
            sockaddr_storage local {};
            socklen_t localSize = sizeof local;
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localSize);
            describeAddress(local, c->localHost, c->localPort);
            startReading(*c, now);
            connections[fd] = c;
            watch(fd, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
        }
    }

    // The connection that has waited longest for its request (idle ones count) makes room.
    bool evictOne()
    {
        Connection* oldest = nullptr;
        for (auto& [fd, c] : connections)
            if (c->phase != Connection::Phase::Working && (!oldest || c->since < oldest->since))
                oldest = c.get();
        if (!oldest)
            return false;
        close(*oldest);
        return true;
    }

    void readable(Connection& c, Clock::time_point now)
    {
        char block[kReadBlock];
        if (c.phase == Connection::Phase::Lingering) {
            for (ssize_t n; (n = ::recv(c.fd, block, sizeof block, 0)) != 0;) {
                if (n < 0)
                    return errno == EAGAIN || errno == EINTR ? void() : close(c);
                c.discarded += std::size_t(n);
                if (c.discarded > kLingerBytes)
                    break;
            }
            return close(c);
        }
        for (std::size_t taken = 0; taken < kReadPerWake;) {
            const ssize_t n = ::recv(c.fd, block, sizeof block, 0);
            if (n > 0) {
                if (buffered + std::size_t(n) > options.maxBufferedBytes)
                    return refuse(c,
                        { 503, "the server is receiving too many large requests at once; retry",
                            "server_busy" },
                        now);
                c.received.append(block, std::size_t(n));
                buffered += std::size_t(n);
                taken += std::size_t(n);
                if (!c.started) {
                    c.started = true; // the request's own clock starts with its first byte
                    c.deadline = now + options.requestTimeout;
                }
                if (c.received.size()
                    > options.framing.maxHeadBytes + 2 * options.framing.maxBodyBytes)
                    break; // the framer refuses it below
                continue;
            }
            if (n == 0)
                c.endOfInput = true;
            else if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            else if (errno == EINTR)
                continue;
            else
                return close(c);
            break;
        }
        examine(c, now);
    }

    // Acts on what has arrived: wait for more, refuse, or hand the whole request to a worker.
    void examine(Connection& c, Clock::time_point now)
    {
        const auto state = c.framer->scan(c.received);
        if (state == RequestFramer::State::Refused)
            return refuse(c, c.framer->refusal(), now);
        if (state == RequestFramer::State::Complete)
            return dispatch(c, now);
        if (c.endOfInput) // the client ended its side before its request was whole
            return close(c);
        if (state == RequestFramer::State::HeadDone && c.framer->expectsContinue()
            && !c.continueSent) {
            c.continueSent = true;
            static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
            [[maybe_unused]] const auto n
                = ::send(c.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
    }

    void dispatch(Connection& c, Clock::time_point now)
    {
        std::string request = c.framer->normalized(c.received);
        const std::size_t consumed = c.framer->consumed();
        buffered -= std::min(buffered, consumed);
        c.received.erase(0, consumed); // a pipelined next request stays
        const bool quick = c.framer->method() == "GET";
        c.phase = Connection::Phase::Working;
        c.since = now;
        ++c.served;
        ::epoll_ctl(epollFd, EPOLL_CTL_DEL, c.fd, nullptr); // the worker owns it now
        auto held = connections.at(c.fd);
        {
            std::lock_guard lock(mutex);
            working.insert(c.fd);
        }
        const auto completedAt = now;
        auto task = [this, held, completedAt, request = std::move(request)]() mutable {
            work(held, std::move(request), completedAt);
        };
        (quick ? quickWorkers : workers)->enqueue(std::move(task));
    }

    // On a worker: httplib answers the request; the connection goes back to the front for
    // its next request, or closes.
    void work(
        const std::shared_ptr<Connection>& c, std::string request, Clock::time_point completedAt)
    {
        const bool last
            = c->endOfInput || c->served >= options.maxRequestsPerConnection || stopping.load();
        ExchangeStream stream(*c, std::move(request), options.writeTimeout);
        bool halfClosed = c->endOfInput;
        ClientConnection::Scope scope(c->fd, completedAt, halfClosed);
        bool closed = false;
        const bool kept = serve(stream, last, closed);
        {
            std::lock_guard lock(mutex);
            working.erase(c->fd);
            returned.emplace_back(
                c, kept && !closed && !last && !halfClosed && !stream.failed() && !stopping);
        }
        wake();
    }

    void takeReturned(Clock::time_point now)
    {
        std::vector<std::pair<std::shared_ptr<Connection>, bool>> back;
        {
            std::lock_guard lock(mutex);
            back.swap(returned);
        }
        for (auto& [c, keep] : back) {
            if (!keep) {
                ::shutdown(c->fd, SHUT_WR);
                ::close(c->fd);
                buffered -= std::min(buffered, c->received.size());
                connections.erase(c->fd);
                continue;
            }
            startReading(*c, now);
            watch(c->fd, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
            if (!c->received.empty())
                examine(*c, now); // a pipelined request already here
        }
    }

    void expire(Clock::time_point now)
    {
        std::vector<Connection*> late;
        for (auto& [fd, c] : connections)
            if (c->phase != Connection::Phase::Working && now >= c->deadline)
                late.push_back(c.get());
        for (Connection* c : late) {
            if (c->phase == Connection::Phase::Reading && c->started)
                refuse(*c,
                    { 408,
                        "the request did not arrive within "
                            + std::to_string(options.requestTimeout.count() / 1000)
                            + " s (--read-timeout)",
                        "request_timeout" },
                    now);
            else
                close(*c);
        }
    }
};

HttpFront::HttpFront(FrontOptions options, Serve serve, Refused refused)
    : m_impl(std::make_unique<Impl>())
{
    m_impl->options = options;
    m_impl->serve = std::move(serve);
    m_impl->refused = std::move(refused);
    m_impl->epollFd = ::epoll_create1(EPOLL_CLOEXEC);
    m_impl->wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    m_impl->watch(m_impl->wakeFd, EPOLLIN, EPOLL_CTL_ADD);
}

HttpFront::~HttpFront()
{
    stop();
    m_impl->workers.reset(); // joins the workers (their answers were cut at stop)
    m_impl->quickWorkers.reset();
    for (auto& [fd, c] : m_impl->connections)
        ::close(fd);
    if (m_impl->listenFd >= 0)
        ::close(m_impl->listenFd);
    ::close(m_impl->wakeFd);
    ::close(m_impl->epollFd);
}

Result<int> HttpFront::bind(const std::string& host, int port)
{
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || !found)
        return Error { "cannot listen on " + host + ": not an address of this machine" };
    int fd = -1;
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        // SO_REUSEADDR (a restart may bind while old connections linger), not SO_REUSEPORT,
        // which would let a second server bind the same port and take half the clients.
        int yes = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    if (fd < 0)
        return Error { "cannot listen on " + host + ":" + std::to_string(port)
            + " (in use, or not an address of this machine)" };
    sockaddr_storage bound {};
    socklen_t size = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
    std::string ignored;
    int boundPort = 0;
    describeAddress(bound, ignored, boundPort);
    m_impl->listenFd = fd;
    m_impl->watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    return boundPort;
}

void HttpFront::run()
{
    Impl& f = *m_impl;
    f.workers = std::make_unique<httplib::ThreadPool>(std::max<std::size_t>(1, f.options.workers));
    f.quickWorkers
        = std::make_unique<httplib::ThreadPool>(std::max<std::size_t>(1, f.options.quickWorkers));
    std::vector<epoll_event> events(256);
    auto lastSweep = Clock::now();
    while (!f.stopping) {
        const int n = ::epoll_wait(f.epollFd, events.data(), int(events.size()), 50);
        const auto now = Clock::now();
        for (int i = 0; i < n; ++i) {
            const int fd = events[std::size_t(i)].data.fd;
            if (fd == f.listenFd) {
                f.accept(now);
            } else if (fd == f.wakeFd) {
                std::uint64_t count;
                [[maybe_unused]] const auto r = ::read(f.wakeFd, &count, sizeof count);
            } else if (auto it = f.connections.find(fd); it != f.connections.end()) {
                auto held = it->second; // readable() may close it
                f.readable(*held, now);
            }
        }
        f.takeReturned(now);
        if (now - lastSweep >= std::chrono::milliseconds(50)) {
            f.expire(now);
            lastSweep = now;
        }
    }
    // Answers in progress are cut: their writes fail and their generations are cancelled.
    {
        std::lock_guard lock(f.mutex);
        for (int fd : f.working)
            ::shutdown(fd, SHUT_RDWR);
    }
    f.workers->shutdown();
    f.quickWorkers->shutdown();
    f.takeReturned(Clock::now());
}

void HttpFront::stop()
{
    m_impl->stopping = true;
    m_impl->wake();
}

} // namespace cw::server
