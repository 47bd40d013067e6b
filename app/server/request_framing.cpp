#include "app/server/request_framing.h"

#include "app/server/byte_sizes.h"

#include <algorithm>
#include <vector>

namespace cw::server {

namespace {

constexpr std::size_t kMaxChunkLine = 1024; // "<hex size>[;extensions]"
constexpr std::size_t kMaxLengthDigits = 18; // fits a size_t, far above any limit

bool isTokenChar(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return true;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
        return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(char(c)) != std::string_view::npos;
}

std::string lowered(std::string_view text)
{
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return text;
}

int hexDigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

} // namespace

RequestFramer::RequestFramer(FramingLimits limits)
    : m_limits(limits)
{
}

RequestFramer::State RequestFramer::refuse(int status, std::string message, std::string code)
{
    m_refusal = { status, std::move(message), std::move(code) };
    return m_state = State::Refused;
}

RequestFramer::State RequestFramer::scan(std::string_view received)
{
    if (m_state == State::Complete || m_state == State::Refused)
        return m_state;
    if (m_headEnd == 0) {
        const std::size_t end = received.find("\r\n\r\n", m_searchFrom);
        if (end == std::string_view::npos) {
            // The request line alone may be checked before the head is whole.
            const std::size_t lineEnd = received.find("\r\n");
            // + 1: the CR of the line's CRLF may be here without its LF.
            if (lineEnd == std::string_view::npos
                    ? received.size() > m_limits.maxRequestLineBytes + 1
                    : lineEnd > m_limits.maxRequestLineBytes)
                return refuse(414,
                    "the request line is longer than "
                        + std::to_string(m_limits.maxRequestLineBytes) + " bytes",
                    "uri_too_long");
            if (received.size() > m_limits.maxHeadBytes)
                return refuse(431,
                    "the request headers are larger than " + describeBytes(m_limits.maxHeadBytes),
                    "headers_too_large");
            m_searchFrom = received.size() >= 3 ? received.size() - 3 : 0;
            return m_state = State::NeedMore;
        }
        if (end + 4 > m_limits.maxHeadBytes)
            return refuse(431,
                "the request headers are larger than " + describeBytes(m_limits.maxHeadBytes),
                "headers_too_large");
        m_headEnd = end + 4;
        if (parseHead(received.substr(0, end)) == State::Refused)
            return m_state;
        m_chunkAt = m_headEnd;
        m_searchFrom = m_headEnd;
        m_state = State::HeadDone;
    }
    if (m_chunked)
        return scanChunks(received);
    const std::size_t length = m_contentLength.value_or(0);
    if (received.size() - m_headEnd >= length) {
        m_consumed = m_headEnd + length;
        return m_state = State::Complete;
    }
    return m_state = State::HeadDone;
}

RequestFramer::State RequestFramer::parseHead(std::string_view head)
{
    std::vector<std::string_view> lines;
    for (std::size_t at = 0;;) {
        const std::size_t end = head.find("\r\n", at);
        lines.push_back(head.substr(at, end == std::string_view::npos ? end : end - at));
        if (end == std::string_view::npos)
            break;
        at = end + 2;
    }
    for (std::string_view line : lines)
        for (unsigned char c : line)
            if (c == '\0' || c == '\r' || c == '\n')
                return refuse(400, "a request header holds a NUL, CR or LF byte", "bad_header");

    const std::string_view requestLine = lines.front();
    if (requestLine.size() > m_limits.maxRequestLineBytes)
        return refuse(414,
            "the request line is longer than " + std::to_string(m_limits.maxRequestLineBytes)
                + " bytes",
            "uri_too_long");
    const std::size_t space1 = requestLine.find(' ');
    const std::size_t space2
        = space1 == std::string_view::npos ? space1 : requestLine.find(' ', space1 + 1);
    if (space1 == 0 || space2 == std::string_view::npos || space2 == space1 + 1
        || requestLine.find(' ', space2 + 1) != std::string_view::npos)
        return refuse(400, "the request line is not 'METHOD TARGET HTTP/1.1'", "bad_request_line");
    const std::string_view method = requestLine.substr(0, space1);
    if (!std::all_of(method.begin(), method.end(), isTokenChar))
        return refuse(400, "the request method is not a token", "bad_request_line");
    const std::string_view version = requestLine.substr(space2 + 1);
    if (version != "HTTP/1.1" && version != "HTTP/1.0")
        return refuse(505, "only HTTP/1.1 and HTTP/1.0 are served", "http_version");
    m_method = std::string(method);
    m_target = std::string(requestLine.substr(space1 + 1, space2 - space1 - 1));
    m_head = std::string(requestLine);

    int lengths = 0, encodings = 0;
    std::string encoding;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        if (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            return refuse(400, "folded header lines are not accepted", "bad_header");
        const std::size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos
            || !std::all_of(line.begin(), line.begin() + std::ptrdiff_t(colon), isTokenChar))
            return refuse(400, "a request header is not 'Name: value'", "bad_header");
        const std::string name = lowered(line.substr(0, colon));
        const std::string_view value = trimmed(line.substr(colon + 1));
        for (unsigned char c : value)
            if ((c < 0x20 && c != '\t') || c == 0x7F)
                return refuse(400, "header '" + name + "' holds a control character", "bad_header");
        if (name == "content-length") {
            ++lengths;
            if (value.empty() || value.size() > kMaxLengthDigits
                || !std::all_of(
                    value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return refuse(400, "Content-Length is not a number", "bad_content_length");
            m_contentLength = std::stoull(std::string(value));
            continue;
        }
        if (name == "transfer-encoding") {
            ++encodings;
            encoding = lowered(value);
            continue;
        }
        if (name == "expect") {
            if (lowered(value) != "100-continue")
                return refuse(
                    417, "only 'Expect: 100-continue' is understood", "expectation_failed");
            m_expectContinue = true;
            continue;
        }
        if (name == "content-type") {
            // The body is JSON whatever the client calls it; httplib would cut a form body at
            // 8 KiB (curl -d says application/x-www-form-urlencoded) or parse a multipart one.
            const std::string type = lowered(value);
            if (type.rfind("application/x-www-form-urlencoded", 0) == 0
                || type.rfind("multipart/", 0) == 0)
                continue;
        }
        m_head += "\r\n";
        m_head += line;
    }
    // Two framings of one body are how requests are smuggled past a proxy: refuse them.
    if (lengths > 1)
        return refuse(400, "the request has more than one Content-Length", "bad_content_length");
    if (encodings > 0 && lengths > 0)
        return refuse(
            400, "the request has both Content-Length and Transfer-Encoding", "bad_content_length");
    if (encodings > 1)
        return refuse(
            400, "the request has more than one Transfer-Encoding", "bad_transfer_encoding");
    if (encodings == 1) {
        if (encoding != "chunked")
            return refuse(501,
                "Transfer-Encoding '" + encoding + "' is not supported (only chunked)",
                "bad_transfer_encoding");
        m_chunked = true;
    }
    if (m_contentLength && *m_contentLength > m_limits.maxBodyBytes)
        return refuse(413,
            "the request body is larger than this server's limit of "
                + describeBytes(m_limits.maxBodyBytes),
            "body_too_large");
    return m_state;
}

RequestFramer::State RequestFramer::scanChunks(std::string_view received)
{
    std::size_t at = m_chunkAt;
    for (;;) {
        // Chunk lines cost bytes beyond the body (1-byte chunks: 6 for 1); more than the
        // body limit again in them is not a client sending a body.
        if (at - m_headEnd > 2 * m_limits.maxBodyBytes + kMaxChunkLine)
            return refuse(413,
                "the request body is larger than this server's limit of "
                    + describeBytes(m_limits.maxBodyBytes),
                "body_too_large");
        if (m_inChunk) {
            const std::size_t take = std::min(m_chunkLeft, received.size() - at);
            m_body.append(received.substr(at, take));
            at += take;
            m_chunkLeft -= take;
            if (m_chunkLeft > 0 || received.size() - at < 2)
                break;
            if (received.substr(at, 2) != "\r\n")
                return refuse(400, "a chunk of the body does not end with CRLF", "bad_chunk");
            at += 2;
            m_inChunk = false;
            m_searchFrom = at;
            continue;
        }
        const std::size_t end = received.find("\r\n", std::max(m_searchFrom, at));
        if (end == std::string_view::npos) {
            const std::size_t limit = m_inTrailers ? m_limits.maxHeadBytes : kMaxChunkLine;
            if (received.size() - at > limit + 1) // + 1: the CR of a CRLF still to come
                return refuse(400,
                    m_inTrailers ? "the body's trailers are too long"
                                 : "a chunk size line is too long",
                    "bad_chunk");
            m_searchFrom = received.size() > at ? received.size() - 1 : at;
            break;
        }
        const std::string_view line = received.substr(at, end - at);
        if (line.size() > (m_inTrailers ? m_limits.maxHeadBytes : kMaxChunkLine))
            return refuse(400,
                m_inTrailers ? "the body's trailers are too long" : "a chunk size line is too long",
                "bad_chunk");
        at = end + 2;
        m_searchFrom = at;
        if (m_inTrailers) {
            if (!line.empty()) {
                if (at - m_headEnd > m_limits.maxBodyBytes + m_limits.maxHeadBytes)
                    return refuse(400, "the body's trailers are too long", "bad_chunk");
                continue; // trailers are read and dropped
            }
            m_consumed = at;
            m_chunkAt = at;
            return m_state = State::Complete;
        }
        std::size_t size = 0, digits = 0;
        for (char c : line) {
            const int d = hexDigit(c);
            if (d < 0)
                break;
            if (++digits > 15)
                return refuse(413,
                    "the request body is larger than this server's limit of "
                        + describeBytes(m_limits.maxBodyBytes),
                    "body_too_large");
            size = size * 16 + std::size_t(d);
        }
        const std::string_view rest = trimmed(line.substr(digits));
        if (digits == 0 || (!rest.empty() && rest.front() != ';'))
            return refuse(400, "a chunk size is not a hexadecimal number", "bad_chunk");
        if (size == 0) {
            m_inTrailers = true;
            continue;
        }
        if (size > m_limits.maxBodyBytes - std::min(m_body.size(), m_limits.maxBodyBytes))
            return refuse(413,
                "the request body is larger than this server's limit of "
                    + describeBytes(m_limits.maxBodyBytes),
                "body_too_large");
        m_chunkLeft = size;
        m_inChunk = true;
    }
    m_chunkAt = at;
    return m_state = State::HeadDone;
}

std::string RequestFramer::normalized(std::string_view received) const
{
    const std::string_view body = m_chunked
        ? std::string_view(m_body)
        : received.substr(m_headEnd, m_contentLength.value_or(0));
    std::string out = m_head;
    if (!body.empty() || m_contentLength || m_chunked || m_method == "POST" || m_method == "PUT"
        || m_method == "PATCH")
        out += "\r\nContent-Length: " + std::to_string(body.size());
    out += "\r\n\r\n";
    out += body;
    return out;
}

} // namespace cw::server
