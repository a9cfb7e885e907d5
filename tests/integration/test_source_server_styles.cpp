// The source server's paging styles, API fixtures, hostile style modes, rate limits and
// OAuth2 (issue 13), asked over HTTP as tributary will ask them. Each walk follows what the
// route says (a token, a Link, a watermark) and must end with exactly the ground truth.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include <httplib.h>

#include "support/source_server.h"

using namespace tributary::testing;
using namespace std::chrono_literals;
using Json = nlohmann::ordered_json;  // keeps the served member order, so dumps compare bytes

namespace {

constexpr const char* kSource = "st.src-0";

struct Answer {
    int status = 0;
    httplib::Headers headers;
    std::string body;
    Json json() const { return Json::parse(body); }
    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
    bool has_header(const std::string& name) const { return headers.count(name) > 0; }
};

Answer get(const SourceServer& server, const std::string& target, const httplib::Headers& headers = {}) {
    httplib::Client client(server.host(), server.port());
    client.set_read_timeout(30, 0);
    auto res = client.Get(target.c_str(), headers);
    REQUIRE(res);
    return Answer{res->status, res->headers, res->body};
}

Answer post_form(const SourceServer& server, const std::string& path, const std::string& form,
                 const httplib::Headers& headers = {}) {
    httplib::Client client(server.host(), server.port());
    auto res = client.Post(path.c_str(), headers, form, "application/x-www-form-urlencoded");
    REQUIRE(res);
    return Answer{res->status, res->headers, res->body};
}

/// The part of an absolute URL after the origin, to ask the same server for it.
std::string target_of(const std::string& url, const SourceServer& server) {
    const std::string origin = server.base_url();
    REQUIRE(url.rfind(origin, 0) == 0);
    return url.substr(origin.size());
}

/// The URL of rel="next" in a Link header, or "".
std::string next_link(const std::string& link) {
    const auto rel = link.find("rel=\"next\"");
    if (rel == std::string::npos) return {};
    const auto open = link.rfind('<', rel);
    const auto close = link.find('>', open);
    return link.substr(open + 1, close - open - 1);
}

Json truth(const SourceServer& server, const std::string& source, const std::string& style) {
    return Json::parse(server.truth_text(source, style));
}

void append_all(Json& into, const Json& records) {
    REQUIRE(records.is_array());
    for (const auto& r : records) into.push_back(r);
}

/// Records in first-seen order, each key once (time and zendesk re-serve records).
Json distinct_by(const Json& records, const std::function<std::string(const Json&)>& key) {
    Json out = Json::array();
    std::set<std::string> seen;
    for (const auto& r : records)
        if (seen.insert(key(r)).second) out.push_back(r);
    return out;
}

std::string style_key(const Json& r) { return r.at("key").get<std::string>(); }

Json walk_generic(const SourceServer& server, const std::string& style, const std::string& source, int limit) {
    const std::string base = "/styles/" + style + "/" + source + "?limit=" + std::to_string(limit);
    Json seen = Json::array();
    if (style == "after-key") {
        std::string after;
        for (;;) {
            auto body = get(server, base + (after.empty() ? "" : "&starting_after=" + after)).json();
            append_all(seen, body.at("data"));
            if (!body.at("has_more").get<bool>()) break;
            after = style_key(seen.back());
        }
    } else if (style == "cursor") {
        std::string cursor;
        for (;;) {
            auto body = get(server, base + (cursor.empty() ? "" : "&cursor=" + cursor)).json();
            append_all(seen, body.at("data"));
            if (body.at("next_cursor").is_null()) break;
            cursor = body.at("next_cursor").get<std::string>();
        }
    } else if (style == "link") {
        std::string target = base;
        while (!target.empty()) {
            auto answer = get(server, target);
            append_all(seen, answer.json());
            const auto next = next_link(answer.header("Link"));
            target = next.empty() ? "" : target_of(next, server);
        }
    } else if (style == "time") {
        std::string since = "0";
        for (;;) {
            auto data = get(server, base + "&since=" + since).json().at("data");
            const auto before = distinct_by(seen, style_key).size();
            append_all(seen, data);
            if (distinct_by(seen, style_key).size() == before) break;
            since = data.back().at("updated_at").get<std::string>();
        }
        seen = distinct_by(seen, style_key);
    } else {
        const char* member = style == "page" ? "results" : "items";
        for (int n = 0;; ++n) {
            const auto param =
                style == "page" ? "&page=" + std::to_string(n + 1) : "&offset=" + std::to_string(n * limit);
            auto records = get(server, base + param).json().at(member);
            append_all(seen, records);
            if (static_cast<int>(records.size()) < limit) break;
        }
    }
    return seen;
}

}  // namespace

TEST_CASE("source server: each generic style walks to exactly the ground truth", "[source-server]") {
    SourceServer server({"--prefix", "st.src-", "--backlog", "23", "--payload-bytes", "80"});
    for (const std::string style : {"after-key", "cursor", "link", "time", "page", "offset"}) {
        INFO(style);
        const Json want = truth(server, kSource, style);
        REQUIRE(want.size() == 23);
        const Json got = walk_generic(server, style, kSource, 5);
        CHECK(got.dump() == want.dump());
    }
    // The record: key, id, updated_at (ms, start + id ms), today's payload.
    const Json all = truth(server, kSource, "cursor");
    const Json& first = all.at(0);
    CHECK(first.at("key") == "evt-0000000001");
    CHECK(first.at("id") == 1);
    CHECK(first.at("updated_at").get<std::string>().size() == std::string("2026-01-01T00:00:00.000Z").size());
    CHECK(first.at("payload").at("id") == 1);
    CHECK(first.at("payload").dump() ==
          Json::parse(get(server, "/_truth/" + std::string(kSource)).body)[0].at("payload").dump());
    for (std::size_t i = 1; i < all.size(); ++i)
        CHECK(all[i].at("updated_at").get<std::string>() > all[i - 1].at("updated_at").get<std::string>());
    // The time route accepts Unix seconds and ISO 8601 with an offset.
    CHECK(get(server, "/styles/time/st.src-0?since=2000-01-01T01:00:00%2B01:00").json().at("data").size() == 23);
    CHECK(get(server, "/styles/time/st.src-0?since=yesterday").status == 400);
    CHECK(get(server, "/styles/cursor/st.src-0?cursor=bogus").status == 400);
    // Every style request is in /_requests with its style and query.
    const auto log = nlohmann::json::parse(get(server, "/_requests?source=st.src-0").body);
    bool cursor_logged = false;
    for (const auto& r : log) {
        REQUIRE(r.contains("style"));
        cursor_logged = cursor_logged || (r["style"] == "cursor" && r["query"] == "cursor=bogus" && r["status"] == 400);
    }
    CHECK(cursor_logged);
}

TEST_CASE("source server: the last cursor asked again returns its page with what was added since", "[source-server]") {
    SourceServer server({"--prefix", "st.src-", "--backlog", "7", "--rate", "200", "--max-events", "30"});
    const std::string base = "/styles/cursor/st.src-0?limit=4";
    Json seen = Json::array();
    std::string cursor;
    auto walk = [&] {
        for (;;) {
            auto body = get(server, base + (cursor.empty() ? "" : "&cursor=" + cursor)).json();
            for (const auto& r : body.at("data")) seen.push_back(r);
            if (body.at("next_cursor").is_null()) return;
            cursor = body.at("next_cursor").get<std::string>();
        }
    };
    walk();
    while (server.stats()["per_source"]["st.src-0"]["produced"] != 30) std::this_thread::sleep_for(20ms);
    walk();  // from the last token: its page again, now with the records added since
    CHECK(distinct_by(seen, style_key).dump() == truth(server, kSource, "cursor").dump());
}

TEST_CASE("source server: each API fixture walks to exactly its ground truth", "[source-server]") {
    SourceServer server({"--prefix", "st.src-", "--backlog", "23", "--payload-bytes", "80"});
    const std::string n = kSource;

    SECTION("github: Link rel=next, bare arrays, oldest first") {
        Json seen = Json::array();
        std::string target =
            "/github/repos/acme/" + n + "/issues/comments?sort=created&direction=asc&per_page=5&page=1";
        auto first = get(server, target);
        CHECK_THAT(first.header("Link"), Catch::Contains("rel=\"last\"") && Catch::Contains("page=5>"));
        while (!target.empty()) {
            auto answer = get(server, target);
            append_all(seen, answer.json());
            auto next = next_link(answer.header("Link"));
            target = next.empty() ? "" : target_of(next, server);
        }
        CHECK(seen.dump() == truth(server, n, "github").dump());
        CHECK(seen[0].at("user").contains("login"));
    }
    SECTION("stripe: newest first in a page; ending_before walks forward") {
        Json seen = Json::array();
        std::string before;
        for (;;) {
            auto body =
                get(server, "/stripe/" + n + "/v1/events?limit=5" + (before.empty() ? "" : "&ending_before=" + before))
                    .json();
            CHECK(body.at("object") == "list");
            const auto& data = body.at("data");
            for (std::size_t i = 1; i < data.size(); ++i) CHECK(data[i - 1].at("id") > data[i].at("id"));
            for (auto it = data.rbegin(); it != data.rend(); ++it) seen.push_back(*it);
            if (!body.at("has_more").get<bool>()) break;
            before = data.at(0).at("id").get<std::string>();
        }
        CHECK(seen.dump() == truth(server, n, "stripe").dump());
    }
    SECTION("shopify: page_info in Link rel=next, rel=previous after the first page") {
        Json seen = Json::array();
        std::string target = "/shopify/" + n + "/admin/api/2024-01/orders.json?limit=5";
        int pages = 0;
        while (!target.empty()) {
            auto answer = get(server, target);
            if (pages++ > 0) CHECK_THAT(answer.header("Link"), Catch::Contains("rel=\"previous\""));
            append_all(seen, answer.json().at("orders"));
            auto next = next_link(answer.header("Link"));
            target = next.empty() ? "" : target_of(next, server);
        }
        CHECK(seen.dump() == truth(server, n, "shopify").dump());
    }
    SECTION("slack: response_metadata.next_cursor until it is empty") {
        Json seen = Json::array();
        std::string cursor;
        for (;;) {
            auto body = get(server, "/slack/" + n + "/api/conversations.history?channel=C123&limit=5" +
                                        (cursor.empty() ? "" : "&cursor=" + cursor))
                            .json();
            CHECK(body.at("ok") == true);
            append_all(seen, body.at("messages"));
            cursor = body.at("response_metadata").at("next_cursor").get<std::string>();
            CHECK(body.at("has_more").get<bool>() == !cursor.empty());
            if (cursor.empty()) break;
        }
        CHECK(seen.dump() == truth(server, n, "slack").dump());
        CHECK(get(server, "/slack/" + n + "/api/conversations.history?limit=5").json().at("ok") == false);
    }
    SECTION("hubspot: paging.next.after until there is no paging") {
        Json seen = Json::array();
        std::string after;
        for (;;) {
            auto body = get(server, "/hubspot/" + n + "/crm/v3/objects/contacts?limit=5" +
                                        (after.empty() ? "" : "&after=" + after))
                            .json();
            append_all(seen, body.at("results"));
            if (!body.contains("paging")) break;
            after = body.at("paging").at("next").at("after").get<std::string>();
        }
        CHECK(seen.dump() == truth(server, n, "hubspot").dump());
    }
}

TEST_CASE("source server: zendesk walks by end_time; mode updates serves tickets again, updated", "[source-server]") {
    SourceServer server({"--prefix", "st.src-", "--backlog", "400", "--payload-bytes", "60"});
    const std::string n = kSource;
    const bool updates = GENERATE(false, true);
    INFO("updates " << updates);
    if (updates) server.set_fault(n, "updates");
    Json seen = Json::array();
    std::string start = "0";
    // A page holds more than a second's tickets (110 at most), so end_time always moves on.
    for (int pages = 0;; ++pages) {
        REQUIRE(pages < 10);
        auto body =
            get(server, "/zendesk/" + n + "/api/v2/incremental/tickets.json?per_page=150&start_time=" + start).json();
        append_all(seen, body.at("tickets"));
        CHECK(body.at("count") == body.at("tickets").size());
        if (body.at("end_of_stream").get<bool>()) {
            CHECK(body.at("next_page").is_null());
            break;
        }
        CHECK_THAT(body.at("next_page").get<std::string>(),
                   Catch::Contains("start_time=" + body.at("end_time").dump()));
        start = body.at("end_time").dump();
    }
    // Pages overlap on their last second: a version is (id, updated_at).
    auto version = [](const Json& t) { return t.at("id").dump() + t.at("updated_at").dump(); };
    const Json want = truth(server, n, "zendesk");
    CHECK(distinct_by(seen, version).dump() == want.dump());
    std::set<int> ids;
    for (const auto& t : want) ids.insert(t.at("id").get<int>());
    CHECK(ids.size() == 400);
    // Tickets 10, 20, .. 300 come again right after tickets 110, 120, .. 400, solved and later.
    CHECK(want.size() == (updates ? 430u : 400u));
    for (std::size_t i = 1; i < want.size(); ++i)
        CHECK(want[i].at("updated_at").get<std::string>() >= want[i - 1].at("updated_at").get<std::string>());
}

TEST_CASE("source server: the hostile style modes", "[source-server]") {
    SourceServer server({"--prefix", "st.src-", "--backlog", "12", "--payload-bytes", "60"});
    const std::string n = kSource;
    auto with_mode = [&](const std::string& mode, const std::string& target) {
        server.set_fault(n, mode);
        auto answer = get(server, target);
        server.set_fault(n, "none");
        return answer;
    };

    SECTION("token-loop: the next token, or the next link, is the one asked") {
        const std::string token = get(server, "/styles/cursor/" + n + "?limit=5").json().at("next_cursor");
        auto looped = with_mode("token-loop", "/styles/cursor/" + n + "?limit=5&cursor=" + token).json();
        CHECK(looped.at("next_cursor") == token);
        const std::string asked = "/styles/link/" + n + "?page_start=6&limit=5";
        CHECK(next_link(with_mode("token-loop", asked).header("Link")) == server.base_url() + asked);
    }
    SECTION("link-offsite: the next link leads to another host") {
        auto answer = with_mode("link-offsite", "/styles/link/" + n + "?limit=5");
        CHECK_THAT(next_link(answer.header("Link")), Catch::StartsWith("http://attacker.invalid/"));
    }
    SECTION("no-records: the records member is absent") {
        auto body = with_mode("no-records", "/styles/cursor/" + n + "?limit=5").json();
        CHECK_FALSE(body.contains("data"));
        CHECK(body.contains("next_cursor"));
        CHECK(with_mode("no-records", "/styles/link/" + n + "?limit=5").json().is_object());
        CHECK_FALSE(with_mode("no-records", "/styles/page/" + n + "?limit=5").json().contains("results"));
    }
    SECTION("no-key and key-bool damage record #1, even past the end") {
        auto missing = with_mode("no-key", "/styles/after-key/" + n + "?limit=5").json().at("data");
        CHECK_FALSE(missing.at(0).contains("key"));
        CHECK(missing.at(1).contains("key"));
        auto boolean = with_mode("key-bool", "/styles/offset/" + n + "?limit=5&offset=100").json().at("items");
        REQUIRE(boolean.size() == 1);
        CHECK(boolean.at(0).at("key") == true);
    }
    SECTION("time-backwards: a record a day before since") {
        const Json all = truth(server, n, "time");
        const std::string since = all.at(3).at("updated_at");
        auto data = with_mode("time-backwards", "/styles/time/" + n + "?since=" + since).json().at("data");
        REQUIRE_FALSE(data.empty());
        const std::string last = data.back().at("updated_at");
        CHECK(last < since);
        CHECK(last.substr(0, 10) < since.substr(0, 10));  // another day
    }
    SECTION("page-shrink: the last page is one record short (page and cursor)") {
        CHECK(get(server, "/styles/page/" + n + "?limit=5&page=3").json().at("results").size() == 2);
        CHECK(with_mode("page-shrink", "/styles/page/" + n + "?limit=5&page=3").json().at("results").size() == 1);
        CHECK(with_mode("page-shrink", "/styles/page/" + n + "?limit=5&page=1").json().at("results").size() == 5);
        CHECK(with_mode("page-shrink", "/styles/cursor/" + n + "?limit=10").json().at("data").size() == 10);
        const std::string token = get(server, "/styles/cursor/" + n + "?limit=10").json().at("next_cursor");
        CHECK(with_mode("page-shrink", "/styles/cursor/" + n + "?limit=10&cursor=" + token).json().at("data").size() ==
              1);
    }
    SECTION("token-huge: a 9000-byte next_cursor") {
        auto body = with_mode("token-huge", "/styles/cursor/" + n + "?limit=5").json();
        CHECK(body.at("next_cursor").get<std::string>().size() == 9000);
    }
    SECTION("ratelimit-absurd: 200 with a spent budget that resets in 3000 years") {
        auto answer = with_mode("ratelimit-absurd", "/styles/page/" + n + "?limit=5");
        CHECK(answer.status == 200);
        CHECK(answer.header("X-RateLimit-Remaining") == "0");
        CHECK(answer.header("X-RateLimit-Reset") == "99999999999");
    }
    SECTION("the HTTP-status modes replace style and fixture answers too") {
        auto answer = with_mode("http-429", "/styles/cursor/" + n);
        CHECK(answer.status == 429);
        CHECK(answer.header("Retry-After") == "2");
        CHECK(with_mode("http-500", "/hubspot/" + n + "/crm/v3/objects/contacts").status == 500);
    }
    SECTION("the events route ignores the style modes") {
        auto answer = with_mode("token-loop", "/sources/" + n + "/events?after_id=0&limit=3");
        CHECK(answer.json().at("events").size() == 3);
    }
}

TEST_CASE("source server: mode late dates new events up to 2 s back; re-asking 2 s back sees them", "[source-server]") {
    SourceServer server(
        {"--prefix", "st.src-", "--backlog", "5", "--rate", "400", "--max-events", "120", "--fault", "st.src-0=late"});
    const std::string n = kSource;
    auto unix_ms = [](const Json& record) {
        const std::string t = record.at("updated_at");
        std::tm parts{};
        REQUIRE(std::sscanf(t.c_str(), "%d-%d-%dT%d:%d:%d", &parts.tm_year, &parts.tm_mon, &parts.tm_mday,
                            &parts.tm_hour, &parts.tm_min, &parts.tm_sec) == 6);
        parts.tm_year -= 1900;
        parts.tm_mon -= 1;
        return static_cast<std::int64_t>(timegm(&parts)) * 1000 + static_cast<std::int64_t>(std::stoi(t.substr(20, 3)));
    };
    // A reader with a 2 s lookback, polling while the source grows: each ask starts 2 s before
    // the newest updated_at seen so far (as Unix seconds with a fraction).
    std::set<std::string> keys;
    std::int64_t watermark = 0;
    for (;;) {
        const bool done = server.stats()["per_source"][n]["produced"] == 120;
        char since[40] = "0";
        if (watermark > 0)
            std::snprintf(since, sizeof since, "%lld.%03lld", static_cast<long long>((watermark - 2000) / 1000),
                          static_cast<long long>((watermark - 2000) % 1000));
        const Json body = get(server, "/styles/time/" + n + "?limit=1000&since=" + since).json();
        for (const auto& r : body.at("data")) {
            keys.insert(style_key(r));
            watermark = std::max(watermark, unix_ms(r));
        }
        if (done) break;
        std::this_thread::sleep_for(20ms);
    }
    const Json want = truth(server, n, "time");
    REQUIRE(want.size() == 120);
    std::set<std::string> want_keys;
    for (const auto& r : want) want_keys.insert(style_key(r));
    CHECK(keys == want_keys);

    // Event i is due at start + i ms; produced in mode late, it is dated 0..2 s before that.
    std::map<std::int64_t, std::int64_t> updated_by_id;
    for (const auto& r : want) updated_by_id[r.at("id").get<std::int64_t>()] = unix_ms(r);
    const std::int64_t start = updated_by_id.at(1) - 1;  // the backlog is never late
    int late = 0;
    for (const auto& [id, updated] : updated_by_id) {
        CHECK(updated <= start + id);
        CHECK(updated >= start + id - 2000);
        late += updated < start + id ? 1 : 0;
    }
    CHECK(late > 0);
    // The fixtures keep their own clock: Slack's ts stay unique and in id order.
    const Json slack = truth(server, n, "slack");
    for (std::size_t i = 1; i < slack.size(); ++i)
        CHECK(slack[i].at("ts").get<std::string>() > slack[i - 1].at("ts").get<std::string>());
}

TEST_CASE("source server: --rate-limit answers 429 past the budget, with GitHub or IETF fields", "[source-server]") {
    // A window of ~11 days: it does not roll over during the test.
    SourceServer server({"--prefix", "st.src-", "--sources", "2", "--backlog", "5", "--rate-limit", "3",
                         "--rate-window-ms", "1000000000"});
    const auto now_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (int i = 0; i < 3; ++i) {
        auto answer = get(server, "/styles/cursor/st.src-0?limit=2");
        CHECK(answer.status == 200);
        CHECK(answer.header("X-RateLimit-Limit") == "3");
        CHECK(answer.header("X-RateLimit-Remaining") == std::to_string(2 - i));
        CHECK(std::stoll(answer.header("X-RateLimit-Reset")) > now_s);
    }
    auto refused = get(server, "/github/repos/acme/st.src-0/issues/comments");  // fixtures share the budget
    CHECK(refused.status == 429);
    CHECK(refused.header("X-RateLimit-Remaining") == "0");
    CHECK_FALSE(refused.has_header("Retry-After"));
    CHECK(server.stats()["per_source"]["st.src-0"]["rate_limited"] == 1);

    // Per source: the other one has its own budget. In mode ratelimit-ietf it speaks the IETF fields.
    server.set_fault("st.src-1", "ratelimit-ietf");
    auto ietf = get(server, "/styles/page/st.src-1");
    CHECK(ietf.status == 200);
    CHECK(ietf.header("RateLimit-Policy") == "\"default\";q=3;w=1000000");
    CHECK_THAT(ietf.header("RateLimit"), Catch::StartsWith("\"default\";r=2;t="));
    CHECK_FALSE(ietf.has_header("X-RateLimit-Remaining"));
    get(server, "/styles/page/st.src-1");
    get(server, "/styles/page/st.src-1");
    auto ietf_refused = get(server, "/styles/page/st.src-1");
    CHECK(ietf_refused.status == 429);
    CHECK_THAT(ietf_refused.header("RateLimit"), Catch::StartsWith("\"default\";r=0;t="));
    CHECK(server.stats()["per_source"]["st.src-1"]["rate_limited"] == 1);
    // The events route is not limited.
    CHECK(get(server, "/sources/st.src-0/events?after_id=0").status == 200);
}

TEST_CASE("source server: OAuth2 client credentials guard the style routes", "[source-server]") {
    SourceServer server(
        {"--prefix", "st.src-", "--backlog", "5", "--oauth-client", "app-id:s3cret", "--oauth-expires-s", "1"});
    const std::string target = "/styles/offset/st.src-0";
    CHECK(get(server, target).status == 401);
    CHECK(get(server, target, {{"Authorization", "Bearer made-up"}}).status == 401);

    auto bad = post_form(server, "/oauth/token", "grant_type=client_credentials&client_id=app-id&client_secret=nope");
    CHECK(bad.status == 401);
    CHECK(bad.json().at("error") == "invalid_client");

    // Credentials as HTTP Basic ("app-id:s3cret" in base64), with a scope.
    auto basic = post_form(server, "/oauth/token", "grant_type=client_credentials&scope=read",
                           {{"Authorization", "Basic YXBwLWlkOnMzY3JldA=="}});
    REQUIRE(basic.status == 200);
    CHECK(basic.json().at("token_type") == "Bearer");
    CHECK(basic.json().at("expires_in") == 1);
    const std::string token = basic.json().at("access_token");
    CHECK(get(server, target, {{"Authorization", "Bearer " + token}}).status == 200);
    CHECK(get(server, "/slack/st.src-0/api/conversations.history?channel=C1", {{"Authorization", "Bearer " + token}})
              .status == 200);

    // Credentials as form fields; revoking ends every token issued so far.
    auto form =
        post_form(server, "/oauth/token", "grant_type=client_credentials&client_id=app-id&client_secret=s3cret");
    REQUIRE(form.status == 200);
    const std::string second = form.json().at("access_token");
    CHECK(second != token);
    server.revoke_tokens();
    CHECK(get(server, target, {{"Authorization", "Bearer " + token}}).status == 401);
    CHECK(get(server, target, {{"Authorization", "Bearer " + second}}).status == 401);

    // A token stops working once expired (expires_in 1 s).
    const std::string third =
        post_form(server, "/oauth/token", "grant_type=client_credentials&client_id=app-id&client_secret=s3cret")
            .json()
            .at("access_token");
    CHECK(get(server, target, {{"Authorization", "Bearer " + third}}).status == 200);
    std::this_thread::sleep_for(1100ms);
    CHECK(get(server, target, {{"Authorization", "Bearer " + third}}).status == 401);

    const auto oauth = server.stats()["oauth"];
    CHECK(oauth["token_requests"] == 4);
    CHECK(oauth["tokens_issued"] == 3);
    CHECK(oauth["rejected"] == 5);
}
