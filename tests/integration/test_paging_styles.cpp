// Every paging style end to end: two loader processes with several workers each read sources
// that keep producing, then stop; every key is stored once and every payload is the server's.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <thread>

#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

struct StyleSource {
    const char* style;
    std::vector<std::string> flags;  ///< how to read the style's route
};

const int kBacklog = 500;
const int kMaxEvents = 2500;

/// One source per style; the server's source "ps.I" is read by the style at index I.
std::vector<StyleSource> style_sources() {
    return {
        {"after-key", {"--records", "/data", "--paginate", "after-key", "--has-more", "/has_more"}},
        {"cursor", {"--records", "/data", "--paginate", "cursor", "--next", "/next_cursor"}},
        {"link", {"--records", "", "--paginate", "link"}},
        // 1000 records a second of updated_at: a page must hold more than the 2 s of lookback.
        {"time",
         {"--records", "/data", "--paginate", "time", "--time-field", "/updated_at", "--lookback", "2s", "--batch-size",
          "3000"}},
        {"page", {"--records", "/results", "--paginate", "page"}},
        {"offset", {"--records", "/items", "--paginate", "offset"}},
    };
}

std::string server_source(std::size_t i) { return "ps." + std::to_string(i); }

void wait_until_produced(const SourceServer& server, std::size_t sources, int events) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
        const auto stats = server.stats()["per_source"];
        bool all = true;
        for (std::size_t i = 0; i < sources; ++i) all = all && stats[server_source(i)]["produced"] == events;
        if (all) return;
        std::this_thread::sleep_for(100ms);
    }
    FAIL("the sources never reached " << events << " events");
}

long long records_served(const SourceServer& server, const std::string& source) {
    long long served = 0;
    for (const auto& request : server.requests(source))
        if (request["status"] == 200) served += request["events"].get<long long>();
    return served;
}

}  // namespace

TEST_CASE("every paging style: two loaders over growing sources store each key once, payloads as served", "[styles]") {
    TestDatabase db;
    const auto styles = style_sources();
    const auto count = styles.size() + 1;  // and one source of tributary's own protocol
    const auto time_source = server_source(3);
    SourceServer server({"--sources", std::to_string(count), "--prefix", "ps.", "--backlog", std::to_string(kBacklog),
                         "--rate", "500", "--max-events", std::to_string(kMaxEvents), "--threads", "32", "--fault",
                         time_source + "=late"});
    for (std::size_t i = 0; i < styles.size(); ++i) {
        std::vector<std::string> add{
            "source", "add",  styles[i].style, "--url",    server.style_url(styles[i].style, server_source(i)),
            "--key",  "/key", "--payload",     "/payload", "--interval-ms",
            "1"};
        if (std::find(styles[i].flags.begin(), styles[i].flags.end(), "--batch-size") == styles[i].flags.end())
            add.insert(add.end(), {"--batch-size", "200"});
        add.insert(add.end(), styles[i].flags.begin(), styles[i].flags.end());
        run_tributary(db.url(), add);
    }
    const auto after_id_source = server_source(styles.size());
    run_tributary(db.url(), {"source", "add", "after-id", "--url", server.events_url(after_id_source), "--interval-ms",
                             "1", "--batch-size", "200"});

    ChildProcess first(tributary_args(db.url(), {"run", "--workers", "3"}));
    ChildProcess second(tributary_args(db.url(), {"run", "--workers", "3"}));
    wait_until_produced(server, count, kMaxEvents);
    first.signal(SIGTERM);
    second.signal(SIGTERM);
    REQUIRE(first.wait_for(30s) == 0);
    REQUIRE(second.wait_for(30s) == 0);
    const auto rest = run_tributary(db.url(), {"run", "--workers", "3", "--until-idle"});
    INFO("first loader:\n" << first.err() << "\nsecond loader:\n" << second.err() << "\nlast run:\n" << rest.err);

    const auto status = status_by_name(db.url());
    for (std::size_t i = 0; i < styles.size(); ++i) {
        INFO(styles[i].style << ": " << status[styles[i].style].dump());
        CHECK(status[styles[i].style]["state"] == "ok");
        CHECK(status[styles[i].style]["events_stored"] == kMaxEvents);
        check_stored_exactly_once(db, server, styles[i].style, server_source(i), styles[i].style);
    }
    // after-id sources behave as before: ids in event_id, the cursor the last id.
    check_stored_exactly_once(db, server, "after-id", after_id_source, "", {{"/id"}, "/payload"});
    CHECK(status["after-id"]["cursor"] == kMaxEvents);
    CHECK(db.scalar("SELECT count(*) FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id"
                    " WHERE s.name = 'after-id' AND (e.event_id IS NULL OR e.event_key IS NOT NULL)") == "0");
    // Records did arrive late: in updated_at order, some id comes after a larger one.
    const auto by_time = nlohmann::json::parse(server.truth_text(time_source, "time"));
    bool late = false;
    for (std::size_t i = 1; i < by_time.size(); ++i) late = late || by_time[i]["id"] < by_time[i - 1]["id"];
    CHECK(late);
    // The time source re-read what its lookback covers, and stored none of it twice.
    CHECK(records_served(server, time_source) > kMaxEvents);
}
