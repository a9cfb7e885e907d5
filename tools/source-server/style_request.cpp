#include "style_request.h"

#include "fault_responses.h"
#include "query_params.h"
#include "request_arrival.h"
#include "wall_clock.h"

namespace tributary::source_server {
namespace {

constexpr const char* kAbsurdReset = "99999999999";

void replace_header(httplib::Response& res, const std::string& name, const std::string& value) {
    res.headers.erase(name);
    res.set_header(name, value);
}

// GitHub's X-RateLimit-* fields, or the IETF RateLimit/RateLimit-Policy fields
// (draft-ietf-httpapi-ratelimit-headers) when the source is in mode ratelimit-ietf.
void set_rate_headers(httplib::Response& res, const RateVerdict& verdict, const RateLimit& limit, bool ietf) {
    if (ietf) {
        replace_header(
            res, "RateLimit-Policy",
            "\"default\";q=" + std::to_string(limit.requests) + ";w=" + std::to_string((limit.window_ms + 999) / 1000));
        replace_header(
            res, "RateLimit",
            "\"default\";r=" + std::to_string(verdict.remaining) + ";t=" + std::to_string(verdict.reset_in_s));
        return;
    }
    replace_header(res, "X-RateLimit-Limit", std::to_string(verdict.limit));
    replace_header(res, "X-RateLimit-Remaining", std::to_string(verdict.remaining));
    replace_header(res, "X-RateLimit-Reset", std::to_string(verdict.reset_unix_s));
}

}  // namespace

void serve_style_request(ServerContext& ctx, const httplib::Request& req, httplib::Response& res,
                         const std::string& style, const std::string& source_name, const StyleHandler& handler) {
    RequestRecord record;
    record.arrival_us = request_arrival_us();
    record.source = source_name;
    record.style = style;
    record.query = query_of(req);

    Source* source = ctx.sources.find(source_name);
    if (source == nullptr) {
        json_error(res, 404, "unknown source '" + source_name + "'");
    } else {
        source->count_request();
        record.fault = source->fault();
        const std::int64_t now_us = realtime_us();
        bool admitted = ctx.oauth == nullptr || ctx.oauth->admit(req, res);
        if (admitted && ctx.rate_limit.enabled()) {
            RateVerdict verdict = source->rate_window().take(ctx.rate_limit, now_us / 1000);
            set_rate_headers(res, verdict, ctx.rate_limit, record.fault == FaultMode::ratelimit_ietf);
            if (!verdict.allowed) {
                json_error(res, 429, "rate limit exceeded");
                admitted = false;
            }
        }
        if (admitted && is_http_status_fault(record.fault)) {
            auto outcome =
                respond_with_fault(record.fault, *source, ctx.generator, BatchQuery{}, now_us, res, ctx.stopping);
            record.retry_after = std::move(outcome.retry_after);
        } else if (admitted) {
            StyleCall call{*source, ctx.generator, req, res, record.fault, now_us};
            res.status = 200;
            record.events = handler(call);
        }
        if (admitted && record.fault == FaultMode::ratelimit_absurd) {
            replace_header(res, "X-RateLimit-Remaining", "0");
            replace_header(res, "X-RateLimit-Reset", kAbsurdReset);
        }
    }
    record.status = res.status;
    ctx.log.add(std::move(record));
}

}  // namespace tributary::source_server
