#include "fault_responses.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace tributary::source_server {
namespace {

constexpr const char* kJson = "application/json";
constexpr std::size_t kHugeFillerBytes = 200u * 1024u * 1024u;  // ~200 MB body
constexpr std::size_t kStreamChunk = 64u * 1024u;
constexpr int kNestingDepth = 100000;
constexpr std::int64_t kTooManyExtra = 5;
constexpr auto kSlowBodyInterval = std::chrono::milliseconds(250);  // 4 bytes per second

enum class IdStyle { normal, missing, string, floating };

// Ids after_id+1 .. : as many real events as the query allows, at least `min_count`
// (made-up ids beyond the source's end).
std::vector<EventRef> batch_at_least(const Source& source, BatchQuery q, std::int64_t min_count, std::int64_t now_us) {
    std::int64_t real = std::clamp<std::int64_t>(source.produced() - q.after_id, 0, q.limit);
    return source.events_from(q.after_id + 1, std::max(real, min_count), now_us);
}

// {"events":[...]} where the last event has a damaged id and/or payload.
std::string batch_with_bad_last(const Source& source, const EventGenerator& gen, const std::vector<EventRef>& events,
                                IdStyle id_style, PayloadVariant variant) {
    const SourceIdentity& s = source.identity();
    std::string out = "{\"events\":[";
    std::vector<EventRef> good(events.begin(), events.end() - 1);
    gen.append_events(out, s, good);
    if (!good.empty()) out += ',';
    const EventRef& last = events.back();
    out += '{';
    switch (id_style) {
        case IdStyle::normal:
            out += "\"id\":";
            append_int(out, last.id);
            out += ',';
            break;
        case IdStyle::missing: break;
        case IdStyle::string:
            out += "\"id\":\"";
            append_int(out, last.id);
            out += "\",";
            break;
        case IdStyle::floating:
            out += "\"id\":";
            append_int(out, last.id);
            out += ".5,";
            break;
    }
    out += "\"payload\":";
    gen.append_payload(out, s, last, variant);
    out += "}]}";
    return out;
}

void plain(httplib::Response& res, int status, const std::string& text) {
    res.status = status;
    res.set_content(text, "text/plain");
}

bool wait_interruptibly(std::chrono::milliseconds total, const std::atomic<bool>& stopping) {
    auto until = std::chrono::steady_clock::now() + total;
    while (std::chrono::steady_clock::now() < until) {
        if (stopping.load()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return !stopping.load();
}

void stream_huge(const Source& source, const EventGenerator& gen, BatchQuery q, std::int64_t now_us,
                 httplib::Response& res, const std::atomic<bool>& stopping) {
    struct State {
        std::string head;
        std::size_t filler_left = kHugeFillerBytes;
        bool head_sent = false;
    };
    auto state = std::make_shared<State>();
    std::int64_t id = q.after_id + 1;
    state->head = "{\"events\":[{\"id\":";
    append_int(state->head, id);
    state->head += ",\"payload\":{\"source\":" + source.identity().name_json + ",\"id\":";
    append_int(state->head, id);
    state->head += ",\"created_at_us\":";
    append_int(state->head, now_us);
    state->head += ",\"data\":\"";

    res.status = 200;
    res.set_chunked_content_provider(kJson, [state, &gen, &stopping](std::size_t, httplib::DataSink& sink) {
        if (stopping.load()) return false;
        if (!state->head_sent) {
            state->head_sent = true;
            return sink.write(state->head.data(), state->head.size());
        }
        if (state->filler_left > 0) {
            std::string_view block = gen.filler_block(std::min(kStreamChunk, state->filler_left));
            state->filler_left -= block.size();
            return sink.write(block.data(), block.size());
        }
        static constexpr std::string_view kTail = "\"}}]}";
        bool ok = sink.write(kTail.data(), kTail.size());
        sink.done();
        return ok;
    });
}

void stream_slowly(httplib::Response& res, const std::atomic<bool>& stopping) {
    auto started = std::make_shared<bool>(false);
    res.status = 200;
    res.set_chunked_content_provider(kJson, [started, &stopping](std::size_t, httplib::DataSink& sink) {
        if (!*started) {
            *started = true;
            static constexpr std::string_view kHead = "{\"events\":[";
            return sink.write(kHead.data(), kHead.size());
        }
        // A valid JSON prefix that never ends: one space at a time, until the client leaves.
        if (!wait_interruptibly(kSlowBodyInterval, stopping)) return false;
        return sink.write(" ", 1);
    });
}

}  // namespace

std::string http_date(std::int64_t unix_seconds) {
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm g{};
    gmtime_r(&t, &g);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[g.tm_wday % 7], g.tm_mday,
                  kMonths[g.tm_mon % 12], g.tm_year + 1900, g.tm_hour, g.tm_min, g.tm_sec);
    return buf;
}

FaultOutcome respond_with_fault(FaultMode mode, const Source& source, const EventGenerator& gen, BatchQuery q,
                                std::int64_t now_us, httplib::Response& res, const std::atomic<bool>& stopping) {
    FaultOutcome out;
    const SourceIdentity& s = source.identity();
    res.status = 200;
    switch (mode) {
        case FaultMode::none: break;
        case FaultMode::truncated: {
            auto events = batch_at_least(source, q, 1, now_us);
            std::string body = gen.batch_body(s, events);
            body.resize(body.size() / 2);  // Content-Length is that of the cut body
            res.set_content(body, kJson);
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        case FaultMode::malformed: {
            auto events = batch_at_least(source, q, 1, now_us);
            res.set_content(batch_with_bad_last(source, gen, events, IdStyle::normal, PayloadVariant::malformed),
                            kJson);
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        case FaultMode::not_json:
            res.set_content(
                "<!DOCTYPE html>\n<html><head><title>Service Unavailable</title></head>\n"
                "<body><h1>We'll be back soon</h1><p>The events service is under maintenance.</p></body></html>\n",
                "text/html");
            break;
        case FaultMode::wrong_content_type: {
            auto events = source.events_after(q.after_id, q.limit);
            res.set_content(gen.batch_body(s, events), "text/plain");
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        case FaultMode::huge:
            stream_huge(source, gen, q, now_us, res, stopping);
            out.events = 1;
            break;
        case FaultMode::slow_body: stream_slowly(res, stopping); break;
        case FaultMode::deep_nesting: {
            std::string body = "{\"events\":[{\"id\":";
            append_int(body, q.after_id + 1);
            body += ",\"payload\":";
            body.append(kNestingDepth, '[');
            body.append(kNestingDepth, ']');
            body += "}]}";
            res.set_content(body, kJson);
            out.events = 1;
            break;
        }
        case FaultMode::out_of_order: {
            auto events = batch_at_least(source, q, 2, now_us);
            std::swap(events[0], events[1]);
            res.set_content(gen.batch_body(s, events), kJson);
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        case FaultMode::at_or_below_cursor: {
            // Ids after_id, after_id+1, ...: increasing, but the first is the cursor itself.
            std::int64_t real = std::clamp<std::int64_t>(source.produced() - q.after_id, 0, q.limit - 1);
            auto events = source.events_from(q.after_id, real + 1, now_us);
            res.set_content(gen.batch_body(s, events), kJson);
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        case FaultMode::missing_id:
        case FaultMode::string_id:
        case FaultMode::float_id:
        case FaultMode::nul_in_payload: {
            auto events = batch_at_least(source, q, 1, now_us);
            IdStyle style = mode == FaultMode::missing_id  ? IdStyle::missing
                            : mode == FaultMode::string_id ? IdStyle::string
                            : mode == FaultMode::float_id  ? IdStyle::floating
                                                           : IdStyle::normal;
            PayloadVariant variant =
                mode == FaultMode::nul_in_payload ? PayloadVariant::nul_in_data : PayloadVariant::normal;
            res.set_content(batch_with_bad_last(source, gen, events, style, variant), kJson);
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        case FaultMode::http_500: plain(res, 500, "injected fault: http-500\n"); break;
        case FaultMode::http_404: plain(res, 404, "injected fault: http-404\n"); break;
        case FaultMode::http_429:
            out.retry_after = "2";
            plain(res, 429, "injected fault: http-429\n");
            break;
        case FaultMode::http_429_date:
            // Whole seconds, rounded up: the date is at least 3 s ahead.
            out.retry_after = http_date((now_us + 3000000 + 999999) / 1000000);
            plain(res, 429, "injected fault: http-429-date\n");
            break;
        case FaultMode::http_503:
            out.retry_after = "2";
            plain(res, 503, "injected fault: http-503\n");
            break;
        case FaultMode::http_503_bare: plain(res, 503, "injected fault: http-503-bare\n"); break;
        case FaultMode::too_many: {
            auto events = source.events_from(q.after_id + 1, q.limit + kTooManyExtra, now_us);
            res.set_content(gen.batch_body(s, events), kJson);
            out.events = static_cast<std::int64_t>(events.size());
            break;
        }
        // The style modes leave the events route alone (routes.cpp never asks for them here).
        case FaultMode::token_loop:
        case FaultMode::link_offsite:
        case FaultMode::no_records:
        case FaultMode::no_key:
        case FaultMode::key_bool:
        case FaultMode::time_backwards:
        case FaultMode::page_shrink:
        case FaultMode::token_huge:
        case FaultMode::ratelimit_absurd:
        case FaultMode::ratelimit_ietf:
        case FaultMode::late:
        case FaultMode::updates:
        case FaultMode::limit_ignored: break;
    }
    if (!out.retry_after.empty()) res.set_header("Retry-After", out.retry_after);
    return out;
}

}  // namespace tributary::source_server
