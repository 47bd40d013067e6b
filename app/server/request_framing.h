#pragma once

// Where one HTTP/1.1 request ends in the bytes a client sent, and whether its framing is one
// this server takes: the head within its size, one Content-Length or `Transfer-Encoding:
// chunked` (never both, never two), a body within --max-body-mib whichever way it comes, no
// NUL or bare CR/LF in a header. The front (http_front.h) feeds it what arrived so far and
// hands the request on, as plain Content-Length bytes, only once it is whole, so that httplib
// never waits on a client.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cw::server {

struct FramingLimits {
    std::size_t maxBodyBytes = 4u << 20;
    std::size_t maxHeadBytes = 64u << 10; // request line and headers together
    std::size_t maxRequestLineBytes = 8192;
};

// A request the front answers itself: status, message and the error code of the JSON body.
struct FramingRefusal {
    int status = 400;
    std::string message;
    std::string code;
};

class RequestFramer {
public:
    enum class State { NeedMore, HeadDone, Complete, Refused };

    explicit RequestFramer(FramingLimits limits);

    // `received`: every byte of the connection from the start of this request (the same
    // bytes again, plus more, on each call). Work is proportional to the new bytes.
    State scan(std::string_view received);

    State state() const { return m_state; }
    const FramingRefusal& refusal() const { return m_refusal; }
    // From HeadDone on.
    const std::string& method() const { return m_method; }
    const std::string& target() const { return m_target; }
    // The client sent `Expect: 100-continue` and waits for "100 Continue" before its body.
    bool expectsContinue() const { return m_expectContinue; }
    // Complete: how many bytes of `received` this request took (a pipelined next one follows).
    std::size_t consumed() const { return m_consumed; }
    // Complete: the request as httplib reads it: the head without Transfer-Encoding, Expect
    // or a form Content-Type, with Content-Length, then the (de-chunked) body.
    std::string normalized(std::string_view received) const;

private:
    State refuse(int status, std::string message, std::string code);
    State parseHead(std::string_view head);
    State scanChunks(std::string_view received);

    FramingLimits m_limits;
    State m_state = State::NeedMore;
    FramingRefusal m_refusal;
    std::size_t m_searchFrom = 0; // where to look for the end of the head next
    std::size_t m_headEnd = 0; // offset of the body
    std::string m_method, m_target;
    std::string m_head; // the normalized head lines, without Content-Length
    std::optional<std::size_t> m_contentLength;
    bool m_chunked = false;
    bool m_expectContinue = false;
    std::size_t m_consumed = 0;
    // Chunked bodies: the decoded body, where the next chunk line starts, the bytes left in
    // the current chunk, and whether the trailers are being read.
    std::string m_body;
    std::size_t m_chunkAt = 0;
    std::size_t m_chunkLeft = 0;
    bool m_inChunk = false;
    bool m_inTrailers = false;
};

} // namespace cw::server
