#include "http_exchange.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace tributary::metrics {

namespace {

const char* reason_phrase(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 411: return "Length Required";
        case 413: return "Payload Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return "Unknown";
    }
}

bool iequals(const std::string& a, const char* b) {
    return a.size() == std::strlen(b) && std::equal(a.begin(), a.end(), b, [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

ParsedRequest refused(int status, std::string why) {
    ParsedRequest parsed;
    parsed.refusal = Answer{status, std::move(why)};
    return parsed;
}

}  // namespace

ParsedRequest parse_request(const std::string& in) {
    const auto head_end = in.find("\r\n\r\n");
    if (head_end == std::string::npos)
        return in.size() >= kMaxRequest ? refused(413, "request too large\n") : ParsedRequest{};
    const auto line_end = in.find("\r\n");
    const std::string line = in.substr(0, line_end);
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0)
        return refused(400, "malformed request line\n");
    ParsedRequest parsed;
    RequestHead& head = parsed.head;
    head.method = line.substr(0, sp1);
    head.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
    head.path = head.path.substr(0, head.path.find('?'));
    // Only the body's framing matters here. No Content-Length and no
    // Transfer-Encoding means no body (RFC 9112 §6.3): never wait for one.
    for (auto at = line_end + 2; at < head_end;) {
        const auto end = in.find("\r\n", at);
        const std::string field = in.substr(at, end - at);
        at = end + 2;
        const auto colon = field.find(':');
        if (colon == std::string::npos) continue;
        const std::string name = field.substr(0, colon);
        std::string value = field.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        value.erase(value.find_last_not_of(" \t") + 1);
        if (iequals(name, "Transfer-Encoding")) return refused(411, "send a Content-Length, or no body at all\n");
        if (iequals(name, "Content-Length")) {
            if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos)
                return refused(400, "bad Content-Length\n");
            head.body_length = std::stoul(value);
        }
    }
    if (head_end + 4 + head.body_length > kMaxRequest) return refused(413, "request too large\n");
    parsed.complete = in.size() >= head_end + 4 + head.body_length;
    return parsed;
}

std::string serialized(const Answer& answer, bool head_only) {
    return "HTTP/1.1 " + std::to_string(answer.status) + " " + reason_phrase(answer.status) +
           "\r\nContent-Type: " + answer.content_type + "\r\nContent-Length: " + std::to_string(answer.body.size()) +
           "\r\nConnection: close\r\n\r\n" + (head_only ? std::string() : answer.body);
}

}  // namespace tributary::metrics
