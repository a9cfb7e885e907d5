// The console's /metrics (src/metrics/console_group_metrics, group_metrics,
// src/console/group_figures_document): the text made of a canned groups
// document, one read per 5 s whatever the scrapers, a database away.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "console/console_api.h"
#include "console/group_figures_document.h"
#include "core/errors.h"
#include "metrics/console_group_metrics.h"

using namespace tributary;
using tributary::metrics::ConsoleGroupMetrics;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

const std::string kTwoGroups = R"({"groups": [
  {"name": "billing", "pattern": "orders.>", "ordered": false, "max_deliveries": 5, "events_behind": 1000,
   "events_behind_capped": true,
   "oldest_unprocessed_age": 930.5, "batches_in_flight": 2, "retries_waiting": 3, "dead_letters": 4,
   "holds_partitions": 0},
  {"name": "audit", "pattern": ">", "ordered": true, "max_deliveries": 3, "events_behind": 0,
   "oldest_unprocessed_age": null, "batches_in_flight": 0, "retries_waiting": 0, "dead_letters": 0,
   "holds_partitions": 0}]})";

/// Answers `document` to groups(), or throws what `fail` says; counts reads.
class GroupsStore : public console::ConsoleStore {
public:
    std::string document = kTwoGroups;
    std::function<void()> fail;
    int reads = 0;

    std::string groups() override {
        ++reads;
        if (fail) fail();
        return document;
    }
    std::string overview() override { throw std::logic_error("not read"); }
    std::string sources(const console::SourceQuery&) override { throw std::logic_error("not read"); }
    std::string source(const std::string&) override { throw std::logic_error("not read"); }
    std::string group(const std::string&, const console::DeadLetterQuery&) override {
        throw std::logic_error("not read");
    }
    std::string pause(const std::string&) override { throw std::logic_error("no action"); }
    std::string resume(const std::string&) override { throw std::logic_error("no action"); }
    std::string nudge(const std::string&) override { throw std::logic_error("no action"); }
    std::string replay(const std::string&, std::optional<std::int64_t>) override {
        throw std::logic_error("no action");
    }
    std::string reset(const std::string&, const std::string&) override { throw std::logic_error("no action"); }
};

/// A steady clock the test moves.
struct ManualClock {
    std::chrono::steady_clock::time_point now{};
    ConsoleGroupMetrics::Now function() {
        return [this] { return now; };
    }
};

}  // namespace

TEST_CASE("console metrics: every group's figures from the groups document, a null age as 0, the count's cap",
          "[console]") {
    GroupsStore store;
    ManualClock clock;
    ConsoleGroupMetrics metrics(store, "0.17.0", std::chrono::seconds(5), clock.function());
    const auto text = metrics.scrape();
    CHECK(has_line(text, R"(tributary_group_events_behind{group="billing"} 1000)"));
    CHECK(has_line(text, R"(tributary_group_events_behind_capped{group="billing"} 1)"));
    CHECK(has_line(text, R"(tributary_group_events_behind_capped{group="audit"} 0)"));
    CHECK(has_line(text, R"(tributary_group_oldest_unprocessed_age_seconds{group="billing"} 930.5)"));
    CHECK(has_line(text, R"(tributary_group_batches_in_flight{group="billing"} 2)"));
    CHECK(has_line(text, R"(tributary_group_retries_waiting{group="billing"} 3)"));
    CHECK(has_line(text, R"(tributary_group_dead_letters{group="billing"} 4)"));
    CHECK(has_line(text, R"(tributary_group_events_behind{group="audit"} 0)"));
    CHECK(has_line(text, R"(tributary_group_oldest_unprocessed_age_seconds{group="audit"} 0)"));
    CHECK(has_line(text, R"(tributary_group_dead_letters{group="audit"} 0)"));
    CHECK(has_line(text, "tributary_console_database_up 1"));
    CHECK(has_line(text, R"(tributary_build_info{version="0.17.0"} 1)"));
    CHECK(text.find("# TYPE tributary_group_events_behind gauge") != std::string::npos);
    CHECK(store.reads == 1);
}

TEST_CASE("console metrics: one read per 5 s whatever the scrapes; a group gone leaves no series", "[console]") {
    GroupsStore store;
    ManualClock clock;
    ConsoleGroupMetrics metrics(store, "0.17.0", std::chrono::seconds(5), clock.function());
    metrics.scrape();
    clock.now += std::chrono::seconds(4);
    metrics.scrape();
    metrics.scrape();
    CHECK(store.reads == 1);

    store.document = R"({"groups": [{"name": "audit", "events_behind": 7, "oldest_unprocessed_age": 1.5,
                                      "batches_in_flight": 1, "retries_waiting": 0, "dead_letters": 0}]})";
    clock.now += std::chrono::seconds(1);
    const auto text = metrics.scrape();
    CHECK(store.reads == 2);
    CHECK(text.find(R"(group="billing")") == std::string::npos);
    CHECK(has_line(text, R"(tributary_group_events_behind{group="audit"} 7)"));
    CHECK(has_line(text, R"(tributary_group_oldest_unprocessed_age_seconds{group="audit"} 1.5)"));

    store.document = R"({"groups": []})";
    clock.now += std::chrono::seconds(5);
    const auto none = metrics.scrape();
    CHECK(none.find("group=") == std::string::npos);
    CHECK(has_line(none, "tributary_console_database_up 1"));
}

TEST_CASE("console metrics: a group of lanes has a series per lane, an unheld lane as held 0; lanes gone leave none",
          "[console]") {
    GroupsStore store;
    store.document = R"({"groups": [
      {"name": "orders", "events_behind": 12, "oldest_unprocessed_age": 3, "batches_in_flight": 1,
       "retries_waiting": 0, "dead_letters": 0, "lanes": 3, "unheld_lanes": 1, "lane_rows": [
         {"lane": 0, "holder": "host-a:12", "events_behind": 5, "events_behind_capped": false,
          "oldest_unprocessed_age": 3, "batches_in_flight": 1, "retries_waiting": 0},
         {"lane": 1, "holder": null, "events_behind": 1000, "events_behind_capped": true,
          "oldest_unprocessed_age": 2.5, "batches_in_flight": 0, "retries_waiting": 0},
         {"lane": 2, "holder": "host-b:7", "events_behind": 0, "events_behind_capped": false,
          "oldest_unprocessed_age": 0, "batches_in_flight": 0, "retries_waiting": 0}]},
      {"name": "audit", "events_behind": 0, "lanes": 1, "unheld_lanes": 0}]})";
    ManualClock clock;
    ConsoleGroupMetrics metrics(store, "0.17.0", std::chrono::seconds(5), clock.function());
    const auto text = metrics.scrape();
    CHECK(has_line(text, R"(tributary_group_lanes{group="orders"} 3)"));
    CHECK(has_line(text, R"(tributary_group_unheld_lanes{group="orders"} 1)"));
    CHECK(has_line(text, R"(tributary_group_lanes{group="audit"} 1)"));
    CHECK(has_line(text, R"(tributary_group_unheld_lanes{group="audit"} 0)"));
    CHECK(has_line(text, R"(tributary_group_lane_events_behind{group="orders",lane="0"} 5)"));
    CHECK(has_line(text, R"(tributary_group_lane_events_behind{group="orders",lane="1"} 1000)"));
    CHECK(has_line(text, R"(tributary_group_lane_events_behind_capped{group="orders",lane="1"} 1)"));
    CHECK(has_line(text, R"(tributary_group_lane_oldest_unprocessed_age_seconds{group="orders",lane="1"} 2.5)"));
    CHECK(has_line(text, R"(tributary_group_lane_held{group="orders",lane="0"} 1)"));
    CHECK(has_line(text, R"(tributary_group_lane_held{group="orders",lane="1"} 0)"));
    CHECK(text.find(R"(group="audit",lane=)") == std::string::npos);  // a group without lanes: none
    CHECK(text.find("host-a") == std::string::npos);                  // a holder's name is no label

    // The group made again with one lane fewer: lane 2's series go.
    store.document = R"({"groups": [{"name": "orders", "lanes": 2, "unheld_lanes": 0, "lane_rows": [
      {"lane": 0, "holder": "a", "events_behind": 0}, {"lane": 1, "holder": "b", "events_behind": 0}]}]})";
    clock.now += std::chrono::seconds(5);
    const auto fewer = metrics.scrape();
    CHECK(has_line(fewer, R"(tributary_group_lane_held{group="orders",lane="1"} 1)"));
    CHECK(fewer.find(R"(lane="2")") == std::string::npos);
    CHECK(fewer.find(R"(group="audit")") == std::string::npos);
}

TEST_CASE("console metrics: a database away is database_up 0 with the last read's group series, tried once per 5 s",
          "[console]") {
    GroupsStore store;
    ManualClock clock;
    ConsoleGroupMetrics metrics(store, "0.17.0", std::chrono::seconds(5), clock.function());
    metrics.scrape();

    store.fail = [] { throw DatabaseUnavailable("connection refused"); };
    clock.now += std::chrono::seconds(5);
    const auto away = metrics.scrape();
    CHECK(has_line(away, "tributary_console_database_up 0"));
    CHECK(has_line(away, R"(tributary_group_dead_letters{group="billing"} 4)"));
    metrics.scrape();
    CHECK(store.reads == 2);  // the failure is kept as long as a good read

    store.fail = nullptr;
    store.document = R"({"groups": []})";
    clock.now += std::chrono::seconds(5);
    const auto back = metrics.scrape();
    CHECK(has_line(back, "tributary_console_database_up 1"));
    CHECK(back.find("group=") == std::string::npos);
}

TEST_CASE("console metrics: a console that never read the groups has no group series and database_up 0", "[console]") {
    GroupsStore store;
    store.fail = [] { throw std::runtime_error("permission denied for function console_groups"); };
    ManualClock clock;
    ConsoleGroupMetrics metrics(store, "0.17.0", std::chrono::seconds(5), clock.function());
    const auto text = metrics.scrape();
    CHECK(has_line(text, "tributary_console_database_up 0"));
    CHECK(text.find("group=") == std::string::npos);
}

TEST_CASE("console metrics: a groups document of another shape is refused", "[console]") {
    CHECK_THROWS_AS(console::group_figures(R"({"nothing": []})"), std::runtime_error);
    CHECK_THROWS_AS(console::group_figures(R"({"groups": [{"events_behind": 1}]})"), std::runtime_error);
    CHECK_THROWS_AS(console::group_figures("not json"), std::runtime_error);
    CHECK(console::group_figures(R"({"groups": []})").empty());
}

TEST_CASE("console api: GET /metrics serves the text format without a token, with the security headers", "[console]") {
    GroupsStore store;
    ConsoleGroupMetrics metrics(store, "0.17.0");
    console::ConsoleApi api(store, std::nullopt, {"0.17.0 (x)", "db", true}, nullptr, &metrics);
    console::ConsoleRequest request;
    request.method = "GET";
    request.path = "/metrics";
    request.headers["host"] = "127.0.0.1:8080";
    const auto response = api.handle(request);
    CHECK(response.status == 200);
    CHECK(response.content_type == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(has_line(response.body, R"(tributary_group_dead_letters{group="billing"} 4)"));
    bool csp = false;
    for (const auto& [name, value] : response.headers) csp = csp || name == "Content-Security-Policy";
    CHECK(csp);

    request.query.emplace("x", "1");
    CHECK(api.handle(request).status == 400);
    request.query.clear();
    request.method = "POST";
    CHECK(api.handle(request).status == 405);

    console::ConsoleApi without(store, std::nullopt, {"0.17.0 (x)", "db", true});
    request.method = "GET";
    CHECK(without.handle(request).status == 503);
}
