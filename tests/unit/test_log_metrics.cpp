// The log's gauges (src/metrics/log_metrics): what a refresh of
// tributary.log_status() makes of them.

#include <catch2/catch.hpp>

#include "metrics/log_metrics.h"

using tributary::LogStatus;
using tributary::metrics::LogMetrics;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

LogStatus held_by(std::vector<tributary::RetentionHold> held) {
    LogStatus s;
    s.partitions = 3;
    s.bytes = 4096;
    s.held = std::move(held);
    return s;
}

}  // namespace

TEST_CASE("log metrics: a group's series leaves when it lets go; unknown figures have no series") {
    LogMetrics metrics("host:1:abc");
    metrics.update(held_by({{"slow", 2, 100}, {"slower", 1, 50}}));
    auto text = metrics.scrape();
    CHECK(has_line(text, R"(tributary_log_retention_held_partitions{group="slow"} 2)"));
    CHECK(has_line(text, R"(tributary_log_retention_held_partitions{group="slower"} 1)"));
    CHECK(has_line(text, "tributary_log_partitions 3"));
    CHECK(has_line(text, "tributary_log_bytes 4096"));
    CHECK(text.find("tributary_log_next_drop_seconds ") == std::string::npos);
    CHECK(text.find("tributary_log_ahead_seconds ") == std::string::npos);
    CHECK(text.find("tributary_log_oldest_event_age_seconds ") == std::string::npos);

    auto later = held_by({{"slower", 1, 50}});
    later.next_drop_partition = "events_0";
    later.next_drop_seconds = 0;
    later.ahead_seconds = 3600;
    metrics.update(later);
    text = metrics.scrape();
    CHECK(text.find(R"(group="slow")") == std::string::npos);
    CHECK(has_line(text, R"(tributary_log_retention_held_partitions{group="slower"} 1)"));
    CHECK(has_line(text, "tributary_log_next_drop_seconds 0"));
    CHECK(has_line(text, "tributary_log_ahead_seconds 3600"));

    metrics.update(held_by({}));  // the drop happened; the rate is still known to the database, not here
    text = metrics.scrape();
    CHECK(text.find("tributary_log_next_drop_seconds ") == std::string::npos);
}

TEST_CASE("log metrics: is_leader only while this process's name holds the lease unexpired") {
    LogStatus s;
    s.maintainer_holder = "host:1:abc";
    s.maintainer_expires_in_seconds = 20;
    LogMetrics leader("host:1:abc");
    leader.update(s);
    CHECK(has_line(leader.scrape(), "tributary_maintainer_is_leader 1"));
    LogMetrics other("host:2:def");
    other.update(s);
    CHECK(has_line(other.scrape(), "tributary_maintainer_is_leader 0"));
    s.maintainer_expires_in_seconds = -1;
    leader.update(s);
    CHECK(has_line(leader.scrape(), "tributary_maintainer_is_leader 0"));
    LogMetrics no_part("");
    no_part.update(s);
    CHECK(has_line(no_part.scrape(), "tributary_maintainer_is_leader 0"));
}

TEST_CASE("log metrics: before the first refresh no gauge has a series; once known, 0 is a value") {
    LogMetrics metrics("host:1:abc");
    auto text = metrics.scrape();
    for (const auto* name :
         {"tributary_log_bytes", "tributary_log_partitions", "tributary_log_default_partition_events",
          "tributary_log_archive_failing_partitions", "tributary_oldest_transaction_age_seconds",
          "tributary_xmin_horizon_lag_xids", "tributary_maintainer_is_leader", "tributary_log_ahead_seconds",
          "tributary_log_next_drop_seconds", "tributary_log_oldest_event_age_seconds"}) {
        INFO(name);
        CHECK(text.find(std::string("\n") + name + " ") == std::string::npos);
        CHECK(text.find(std::string("\n") + name + "{") == std::string::npos);
    }

    LogStatus none_open;  // a refresh that found no open transaction and an empty log
    metrics.update(none_open);
    text = metrics.scrape();
    CHECK(has_line(text, "tributary_log_partitions 0"));
    CHECK(has_line(text, "tributary_oldest_transaction_age_seconds 0"));
    CHECK(has_line(text, "tributary_maintainer_is_leader 0"));
    LogStatus open_3s;
    open_3s.oldest_xact_age_seconds = 3;
    metrics.update(open_3s);
    CHECK(has_line(metrics.scrape(), "tributary_oldest_transaction_age_seconds 3"));
}
