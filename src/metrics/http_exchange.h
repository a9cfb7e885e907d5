#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace tributary::metrics {

// The little of HTTP/1.1 the listen server needs: where a request ends (its
// head, and a body only when Content-Length announces one), its method and
// path, and an answer's bytes. One request per connection.

/// Head and body together: our requests have no use for more.
constexpr std::size_t kMaxRequest = 16 * 1024;

/// What the server sends back (always with Connection: close).
struct Answer {
    int status = 200;
    std::string body;
    std::string content_type = "text/plain; charset=utf-8";
};

/// A request's head, once it has arrived whole.
struct RequestHead {
    std::string method;
    std::string path;  ///< the target without its query
    std::size_t body_length = 0;
};

/// What arrived so far: a whole request, or not yet (`complete` false and no
/// refusal: wait for more), or one to refuse with `refusal`.
struct ParsedRequest {
    bool complete = false;
    RequestHead head;
    std::optional<Answer> refusal;
};

ParsedRequest parse_request(const std::string& received);

/// The answer as bytes on the wire; `head_only` (a HEAD request) leaves the
/// body out but keeps its Content-Length.
std::string serialized(const Answer& answer, bool head_only = false);

}  // namespace tributary::metrics
