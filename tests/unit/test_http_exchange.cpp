// The listen server's HTTP framing: a request ends with its head unless a
// Content-Length announces a body; what it cannot serve is refused at once.

#include <catch2/catch.hpp>

#include "metrics/http_exchange.h"

using namespace tributary::metrics;

TEST_CASE("a request without Content-Length is whole at the end of its head: no body is waited for") {
    const auto nudge = parse_request("POST /sources/s/nudge HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(nudge.complete);
    CHECK_FALSE(nudge.refusal);
    CHECK(nudge.head.method == "POST");
    CHECK(nudge.head.path == "/sources/s/nudge");
    CHECK(parse_request("GET /metrics?x=1 HTTP/1.0\r\n\r\n").head.path == "/metrics");
}

TEST_CASE("a request still arriving is incomplete; a body is waited for only when announced") {
    CHECK_FALSE(parse_request("GET /metrics HTTP/1.1\r\nHost: x\r\n").complete);
    CHECK_FALSE(parse_request("GET /metrics HTTP/1.1\r\nHost: x\r\n").refusal);
    const std::string head = "POST /sources/s/nudge HTTP/1.1\r\ncontent-length:  4 \r\n\r\n";
    CHECK_FALSE(parse_request(head + "{}").complete);
    CHECK(parse_request(head + "{}{}").complete);
    CHECK(parse_request(head + "{}{}").head.body_length == 4);
}

TEST_CASE("what the server cannot serve is refused without waiting") {
    const auto status = [](const std::string& request) {
        const auto parsed = parse_request(request);
        return parsed.refusal ? parsed.refusal->status : 0;
    };
    CHECK(status("nonsense\r\n\r\n") == 400);
    CHECK(status("GET /metrics\r\n\r\n") == 400);
    CHECK(status("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 411);
    CHECK(status("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400);
    CHECK(status("POST /x HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n") == 400);
    CHECK(status("POST /x HTTP/1.1\r\nContent-Length: 20000\r\n\r\n") == 413);
    CHECK(status("GET /" + std::string(kMaxRequest, 'a')) == 413);  // a head that never ends
}

TEST_CASE("an answer says its length and closes; HEAD leaves the body out") {
    const Answer ok{200, "ok\n"};
    CHECK(serialized(ok) ==
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n");
    CHECK(serialized(ok, true) ==
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
}
