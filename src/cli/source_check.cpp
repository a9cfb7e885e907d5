#include "source_check.h"

#include <cstdlib>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "aligned_table.h"
#include "core/access_tokens.h"
#include "core/page_taking.h"
#include "core/shared_access_token.h"
#include "core/stop_signal.h"
#include "http/curl_event_fetcher.h"
#include "http/oauth2_token_request.h"
#include "http/shown_url.h"

namespace tributary::cli {

namespace {

/// An OAuth2 token for this process alone: `source check` writes nothing to
/// the database, not even the token the loaders share (and the admin may
/// not read theirs). One token request per check.
class UnsharedAccessTokens : public AccessTokens {
public:
    std::optional<AccessToken> current(int) override { return token_; }
    bool try_become_refresher(int, std::int64_t, std::chrono::seconds) override { return true; }
    void store(int, const std::string& value, std::chrono::seconds, std::chrono::seconds) override {
        token_ = AccessToken{value, token_ ? token_->generation + 1 : 1, false};
    }
    void reject(int, std::int64_t) override { token_.reset(); }

private:
    std::optional<AccessToken> token_;
};

/// A position as the check shows it (shown_cursor_text: a next link's query may echo a credential).
std::string shown_position(const Cursor& cursor) { return shown_cursor_text(cursor.position()); }

/// A cursor in the table: an id, or a position quoted, with the records of
/// its page already taken.
std::string shown_cursor(const Cursor& cursor) {
    if (cursor.is_id()) return std::to_string(cursor.id());
    return "\"" + shown_position(cursor) + "\"" +
           (cursor.taken() > 0 ? " (+" + std::to_string(cursor.taken()) + ")" : "");
}

/// A cursor in JSON: an id as a number, a position as a string; the records
/// of its page already taken in `taken_member` when there are any.
void put_cursor(nlohmann::json& j, const char* member, const char* taken_member, const Cursor& cursor) {
    if (cursor.is_id()) {
        j[member] = cursor.id();
        return;
    }
    j[member] = shown_position(cursor);
    if (cursor.taken() > 0) j[taken_member] = cursor.taken();
}

std::string key_of(const Source& source, const Event& event) {
    constexpr std::size_t kShown = 40;
    if (source.keyed_by_id()) return std::to_string(event.id);
    return event.key.size() > kShown ? event.key.substr(0, kShown) + "..." : event.key;
}

/// Why the page fails, in the loader's words.
std::string failure_of(const CheckedPage& page) {
    if (page.result.status != FetchResult::Status::ok)
        return std::string(to_string(page.result.status)) + ": " + page.result.error;
    return page.violation ? "failing: " + *page.violation : "";
}

nlohmann::json page_json(const Source& source, std::size_t index, const CheckedPage& page) {
    const auto& events = page.result.events;
    nlohmann::json j = {
        {"page", index + 1}, {"ok", page.ok()}, {"status", to_string(page.result.status)}, {"records", events.size()}};
    put_cursor(j, "cursor", "cursor_taken", page.asked);
    if (!page.ok()) j["error"] = failure_of(page);
    auto keys = nlohmann::json::array();
    for (const auto& event : events) keys.push_back(key_of(source, event));
    j["keys"] = keys;
    if (page.ok()) {
        put_cursor(j, "next", "next_taken", page.next);
        j["at_end"] = page.result.at_end;
        j["hold_off_s"] = std::chrono::duration_cast<std::chrono::seconds>(page.result.hold_off).count();
        j["backlog"] = page.result.backlog ? nlohmann::json(*page.result.backlog) : nlohmann::json();
    }
    auto headers = nlohmann::json::object();
    for (const auto& [name, value] : page.rate_limit_headers) headers[name] = value;
    j["rate_limit_headers"] = headers;
    return j;
}

std::string keys_cell(const Source& source, const EventBatch& events) {
    if (events.empty()) return "-";
    if (events.size() == 1) return key_of(source, events.front());
    return key_of(source, events.front()) + " .. " + key_of(source, events.back());
}

void print_table(const Source& source, const Cursor& start, const std::vector<CheckedPage>& pages) {
    std::cout << "source " << source.name << ": GET " << shown_url(source.endpoint.url) << " (paginate "
              << to_string(source.paging.style) << ", batch " << source.batch_size << ") from cursor "
              << shown_cursor(start) << "\n";
    std::vector<std::vector<std::string>> rows{{"PAGE", "CURSOR", "RESULT", "RECORDS", "KEYS", "NEXT CURSOR", "MORE"}};
    for (std::size_t i = 0; i < pages.size(); ++i) {
        const auto& page = pages[i];
        const bool ok = page.ok();
        rows.push_back({std::to_string(i + 1), shown_cursor(page.asked),
                        ok               ? "ok"
                        : page.violation ? "failing"
                                         : to_string(page.result.status),
                        std::to_string(page.result.events.size()), keys_cell(source, page.result.events),
                        ok ? shown_cursor(page.next) : "-",
                        !ok                  ? "-"
                        : page.result.at_end ? "no (the end for now)"
                                             : "yes"});
    }
    print_aligned(rows, {true, false, false, true, false, false, false});
    for (std::size_t i = 0; i < pages.size(); ++i) {
        const auto& page = pages[i];
        const std::string label = "page " + std::to_string(i + 1) + ": ";
        if (!page.ok()) std::cout << label << failure_of(page) << "\n";
        if (!page.rate_limit_headers.empty()) {
            std::cout << label << "rate-limit headers:";
            for (const auto& [name, value] : page.rate_limit_headers) std::cout << " " << name << ": " << value << ";";
            std::cout << "\n";
        }
        if (page.ok() && page.result.hold_off.count() > 0)
            std::cout << label << "rate limit spent: the loader would wait "
                      << std::chrono::duration_cast<std::chrono::seconds>(page.result.hold_off).count() << " s\n";
        if (page.ok() && page.result.backlog)
            std::cout << label << "the source says " << *page.result.backlog << " more are waiting\n";
    }
}

}  // namespace

Source source_of(const postgres::SourceSpec& spec) {
    Source source;
    source.name = spec.name;
    source.endpoint.url = spec.url;
    source.endpoint.headers = spec.headers;
    source.endpoint.auth = spec.auth;
    source.endpoint.timeout = std::chrono::milliseconds(spec.timeout_ms);
    source.layout = spec.layout;
    source.paging = spec.paging;
    source.interval = std::chrono::milliseconds(spec.interval_ms);
    source.batch_size = spec.batch_size;
    return source;
}

Cursor start_of(const postgres::SourceSpec& spec) {
    return spec.paging.style == PagingStyle::after_id ? Cursor::at_id(spec.after_id) : Cursor::at(spec.start);
}

std::vector<CheckedPage> check_pages(const Source& source, const Cursor& start) {
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    fetcher.keep_rate_limit_headers();
    UnsharedAccessTokens tokens;
    SharedAccessToken token(
        tokens, [](const Source& s) { return request_oauth2_token(s, [](const char* n) { return std::getenv(n); }); },
        stop);
    fetcher.share_access_tokens(token);

    std::vector<CheckedPage> pages;
    Cursor at = start;
    for (int asked = 0; asked < 2; ++asked) {
        CheckedPage page;
        page.asked = at;
        try {
            page.result = fetcher.fetch(source, at, source.batch_size);
        } catch (const std::exception& e) {
            page.result = FetchResult::failure(FetchResult::Status::transient, std::string("fetch error: ") + e.what());
        }
        page.result.memory_hold.reset();
        page.rate_limit_headers = fetcher.rate_limit_headers();
        if (page.result.status == FetchResult::Status::ok) {
            // As the loader takes a batch (Loader::fetch_and_store, store_batch).
            page.violation = page_violation(source, at, page.result.events);
            page.next = take_page(source, at, page.result);
        }
        pages.push_back(std::move(page));
        const auto& last = pages.back();
        if (!last.ok() || last.result.at_end || last.next == at) break;
        at = last.next;
    }
    return pages;
}

bool print_check(const Source& source, const Cursor& start, const std::vector<CheckedPage>& pages, bool json) {
    bool ok = true;
    std::size_t records = 0;
    std::string reason;
    for (const auto& page : pages) {
        records += page.result.events.size();
        if (!page.ok() && ok) {
            ok = false;
            reason = failure_of(page);
        }
    }
    if (json) {
        auto all = nlohmann::json::array();
        for (std::size_t i = 0; i < pages.size(); ++i) all.push_back(page_json(source, i, pages[i]));
        nlohmann::json j = {{"source", source.name},
                            {"kind", "http"},
                            {"url", shown_url(source.endpoint.url)},
                            {"paginate", to_string(source.paging.style)},
                            {"ok", ok},
                            {"records", records},
                            {"stored", 0},
                            {"pages", all}};
        put_cursor(j, "cursor", "cursor_taken", start);
        if (!ok) j["reason"] = reason;
        std::cout << j.dump(2) << "\n";
        return ok;
    }
    print_table(source, start, pages);
    if (ok)
        std::cout << "ok: the loader would store " << records << " record" << (records == 1 ? "" : "s")
                  << " from these pages; nothing was stored\n";
    else std::cout << "the loader would fail: " << reason << "\n";
    return ok;
}

void print_nothing_to_check(const std::string& name, postgres::SourceKind kind, bool json) {
    const bool pushed = kind == postgres::SourceKind::pushed;
    const std::string why = pushed ? "nobody asks a pushed source: its events arrive at `tributary receive`"
                                   : "nobody asks a published source: its events arrive by SQL (tributary.publish)";
    if (json) {
        std::cout << nlohmann::json({{"source", name},
                                     {"kind", postgres::kind_name(kind)},
                                     {"checked", false},
                                     {"reason", "nothing to check: " + why}})
                         .dump(2)
                  << "\n";
        return;
    }
    std::cout << "source " << name << ": nothing to check: " << why << "\n";
}

}  // namespace tributary::cli
