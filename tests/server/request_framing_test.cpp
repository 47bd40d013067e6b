// RequestFramer alone: where a request ends, what framings are refused, and that a request
// dripped byte by byte frames as one sent at once.
#include "app/server/request_framing.h"

#include <gtest/gtest.h>

using namespace cw::server;
using State = RequestFramer::State;

namespace {

FramingLimits small()
{
    FramingLimits limits;
    limits.maxBodyBytes = 100;
    limits.maxHeadBytes = 1024;
    limits.maxRequestLineBytes = 200;
    return limits;
}

RequestFramer framed(const std::string& bytes)
{
    RequestFramer f(small());
    f.scan(bytes);
    return f;
}

} // namespace

TEST(RequestFraming, findsTheEndOfALengthFramedRequestAndLeavesTheNext)
{
    const std::string first
        = "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
    RequestFramer f(small());
    EXPECT_EQ(f.scan(first.substr(0, 20)), State::NeedMore);
    EXPECT_EQ(f.scan(first.substr(0, first.size() - 1)), State::HeadDone);
    const std::string both = first + "GET /health HTTP/1.1\r\n\r\n";
    EXPECT_EQ(f.scan(both), State::Complete);
    EXPECT_EQ(f.consumed(), first.size());
    EXPECT_EQ(f.method(), "POST");
    EXPECT_EQ(f.target(), "/v1/completions");
    EXPECT_EQ(f.normalized(both),
        "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello");
}

TEST(RequestFraming, decodesChunkedBodiesIntoContentLength)
{
    const std::string request = "POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n"
                                "Content-Type: application/x-www-form-urlencoded\r\n\r\n"
                                "5;name=v\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n";
    const RequestFramer f = framed(request);
    ASSERT_EQ(f.state(), State::Complete) << f.refusal().message;
    EXPECT_EQ(f.consumed(), request.size());
    // No Transfer-Encoding, and no form Content-Type (httplib cut form bodies at 8 KiB).
    EXPECT_EQ(f.normalized(request), "POST /x HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world");
}

TEST(RequestFraming, dripFeedingFramesAsOneSend)
{
    const std::string request = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    RequestFramer f(small());
    State state = State::NeedMore;
    for (std::size_t n = 1; n <= request.size(); ++n) {
        state = f.scan(std::string_view(request).substr(0, n));
        if (n < request.size()) {
            ASSERT_NE(state, State::Complete) << n;
        }
    }
    ASSERT_EQ(state, State::Complete);
    EXPECT_EQ(f.normalized(request), "POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde");
}

TEST(RequestFraming, refusesBodiesOverTheLimitWhicheverTheFraming)
{
    RequestFramer announced = framed("POST /x HTTP/1.1\r\nContent-Length: 101\r\n\r\n");
    EXPECT_EQ(announced.state(), State::Refused);
    EXPECT_EQ(announced.refusal().status, 413);
    std::string chunked = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 11; ++i)
        chunked += "a\r\n0123456789\r\n";
    const RequestFramer f = framed(chunked);
    EXPECT_EQ(f.state(), State::Refused);
    EXPECT_EQ(f.refusal().status, 413);
    EXPECT_EQ(
        f.refusal().message, "the request body is larger than this server's limit of 100 bytes");
    EXPECT_EQ(framed("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n")
                  .refusal()
                  .status,
        413);
}

TEST(RequestFraming, refusesAmbiguousOrMalformedHeads)
{
    auto status = [](const std::string& head) {
        const RequestFramer f = framed(head + "\r\n");
        return f.state() == State::Refused ? f.refusal().status : 0;
    };
    EXPECT_EQ(status("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n"), 400);
    EXPECT_EQ(
        status("POST /x HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n"), 400);
    EXPECT_EQ(status("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n"), 501);
    EXPECT_EQ(status("POST /x HTTP/1.1\r\nContent-Length: 1, 1\r\n"), 400);
    EXPECT_EQ(status("POST /x HTTP/1.1\r\nContent-Length: -1\r\n"), 400);
    EXPECT_EQ(status(std::string("GET /x HTTP/1.1\r\nAuthorization: Bearer k\0x\r\n", 44)), 400);
    EXPECT_EQ(status("GET /x HTTP/1.1\r\nA: b\r\n c\r\n"), 400); // folded
    EXPECT_EQ(status("GET /x HTTP/1.1\r\nBad Name: b\r\n"), 400);
    EXPECT_EQ(status("GET /x HTTP/2.0\r\n"), 505);
    EXPECT_EQ(status("GET /x HTTP/1.1\r\nExpect: something\r\n"), 417);
    EXPECT_EQ(status("GET /" + std::string(300, 'a') + " HTTP/1.1\r\n"), 414);
    EXPECT_EQ(status("GET / HTTP/1.1\r\nX: " + std::string(2000, 'a') + "\r\n"), 431);
    EXPECT_EQ(status("GET /health HTTP/1.1\r\nHost: a\r\n"), 0);
}

TEST(RequestFraming, refusesALongRequestLineBeforeItEnds)
{
    RequestFramer f(small());
    EXPECT_EQ(f.scan("GET /" + std::string(250, 'a')), State::Refused);
    EXPECT_EQ(f.refusal().status, 414);
    EXPECT_EQ(f.refusal().code, "uri_too_long");
}
