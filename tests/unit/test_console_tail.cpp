#include <catch2/catch.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "console/console_api.h"
#include "console/tail_stream.h"
#include "core/errors.h"

using namespace tributary;
using namespace tributary::console;
using namespace std::chrono_literals;

namespace {

/// What the fake feeds were asked, and what their reads answer next (a
/// read with nothing queued finds nothing).
struct FeedScript {
    std::vector<std::string> calls;
    std::deque<std::function<std::vector<TailEvent>()>> reads;
    std::function<void()> on_open;
};

class FakeTailFeed : public TailFeed {
public:
    explicit FakeTailFeed(std::shared_ptr<FeedScript> script) : script_(std::move(script)) {}
    std::string position(const std::string& from) override {
        script_->calls.push_back("position " + from);
        return "1:0";
    }
    std::string after_event(const std::string& id) override {
        script_->calls.push_back("after " + id);
        return id;
    }
    std::vector<TailEvent> read(const std::string& pattern, const std::string& after, int max) override {
        script_->calls.push_back("read " + pattern + " " + after + " " + std::to_string(max));
        if (script_->reads.empty()) return {};
        auto next = std::move(script_->reads.front());
        script_->reads.pop_front();
        return next();
    }

private:
    std::shared_ptr<FeedScript> script_;
};

class FakeTailFeeds : public TailFeeds {
public:
    std::shared_ptr<FeedScript> script = std::make_shared<FeedScript>();
    std::unique_ptr<TailFeed> open() override {
        if (script->on_open) script->on_open();
        return std::make_unique<FakeTailFeed>(script);
    }
};

/// Hints that are always there: a stream never waits.
class ImmediateWakeup : public Wakeup {
public:
    int waits = 0;
    void wait(std::chrono::milliseconds) override { ++waits; }
};

class NoStore : public ConsoleStore {
public:
    std::string overview() override { return "{}"; }
    std::string sources(const SourceQuery&) override { return "{}"; }
    std::string source(const std::string&) override { return "{}"; }
    std::string groups() override { return "{}"; }
    std::string group(const std::string&, const DeadLetterQuery&) override { return "{}"; }
    std::string pause(const std::string&) override { return "{}"; }
    std::string resume(const std::string&) override { return "{}"; }
    std::string nudge(const std::string&) override { return "{}"; }
    std::string replay(const std::string&, std::optional<std::int64_t>) override { return "{}"; }
    std::string reset(const std::string&, const std::string&) override { return "{}"; }
};

std::vector<TailEvent> events(int from, int count) {
    std::vector<TailEvent> out;
    for (int i = from; i < from + count; ++i)
        out.push_back({"7:" + std::to_string(i), R"({"seq":)" + std::to_string(i) + "}"});
    return out;
}

ConsoleRequest tail_request(std::multimap<std::string, std::string> query = {}) {
    ConsoleRequest request;
    request.method = "GET";
    request.path = "/api/tail";
    request.query = std::move(query);
    request.peer = "127.0.0.1";
    return request;
}

struct TailRig {
    NoStore store;
    FakeTailFeeds feeds;
    TailSlots slots{2};
    ImmediateWakeup wakeup;
    StopSignal stop;
    TailService service{feeds, slots, wakeup, stop, TailStream::Timing{5000ms, 1h, 3}};
    ConsoleApi api{store, std::nullopt, {"v", "db"}, &service};

    /// Runs `steps` steps of `stream`, collecting what it writes.
    static std::string run(TailStream& stream, int steps, bool* still_going = nullptr) {
        std::string written;
        bool going = true;
        for (int i = 0; i < steps && going; ++i)
            going = stream.step([&](std::string_view text) {
                written += text;
                return true;
            });
        if (still_going) *still_going = going;
        return written;
    }
};

}  // namespace

TEST_CASE("console tail: a stream starts at `from`, sends events as frames, and reads on from the last", "[console]") {
    TailRig rig;
    rig.feeds.script->reads.push_back([] { return events(1, 2); });  // the first read, before the stream
    rig.feeds.script->reads.push_back([] { return events(3, 1); });
    auto response = rig.api.handle(tail_request({{"pattern", "orders.>"}, {"from", "beginning"}}));
    REQUIRE(response.status == 200);
    CHECK(response.content_type == "text/event-stream");
    REQUIRE(response.stream);
    const auto written = TailRig::run(*response.stream, 2);
    CHECK(written ==
          ": tail orders.>\n\n"
          "id: 7:1\nevent: event\ndata: {\"seq\":1}\n\n"
          "id: 7:2\nevent: event\ndata: {\"seq\":2}\n\n"
          "id: 7:3\nevent: event\ndata: {\"seq\":3}\n\n");
    CHECK(rig.feeds.script->calls ==
          std::vector<std::string>{"position beginning", "read orders.> 1:0 3", "read orders.> 7:2 3"});
}

TEST_CASE("console tail: a reconnect resumes after its Last-Event-ID; a full read reads again at once", "[console]") {
    TailRig rig;
    rig.feeds.script->reads.push_back([] { return events(5, 3); });  // full: 3 of 3
    auto request = tail_request();
    request.headers["last-event-id"] = "7:4";
    auto response = rig.api.handle(request);
    REQUIRE(response.stream);
    TailRig::run(*response.stream, 2);
    CHECK(rig.feeds.script->calls == std::vector<std::string>{"after 7:4", "read > 7:4 3", "read > 7:7 3"});
    CHECK(rig.wakeup.waits == 0);  // no wait after a full read
}

TEST_CASE("console tail: a bad pattern is 400 before the stream starts, and frees its slot", "[console]") {
    TailRig rig;
    rig.feeds.script->reads.push_back([]() -> std::vector<TailEvent> { throw std::invalid_argument("bad pattern"); });
    const auto response = rig.api.handle(tail_request({{"pattern", "a..b"}}));
    CHECK(response.status == 400);
    CHECK_FALSE(response.stream);
    CHECK(rig.slots.in_use() == 0);
    CHECK(rig.api.handle(tail_request({{"since", "x"}})).status == 400);
}

TEST_CASE("console tail: past the slots 503; a slot comes back when its stream ends", "[console]") {
    TailRig rig;
    auto first = rig.api.handle(tail_request());
    auto second = rig.api.handle(tail_request());
    REQUIRE(first.stream);
    REQUIRE(second.stream);
    CHECK(rig.slots.in_use() == 2);
    const auto third = rig.api.handle(tail_request());
    CHECK(third.status == 503);
    first.stream.reset();
    CHECK(rig.slots.in_use() == 1);
    CHECK(rig.api.handle(tail_request()).status == 200);
}

TEST_CASE("console tail: the database away at the start is 503; without a tail service 503", "[console]") {
    TailRig rig;
    rig.feeds.script->on_open = [] { throw DatabaseUnavailable("connection refused"); };
    const auto response = rig.api.handle(tail_request());
    CHECK(response.status == 503);
    CHECK(rig.slots.in_use() == 0);
    NoStore store;
    ConsoleApi without(store, std::nullopt, {"v", "db"});
    CHECK(without.handle(tail_request()).status == 503);
}

TEST_CASE("console tail: an outage is said once and the stream goes on; resumed when the database is back",
          "[console]") {
    TailRig rig;
    auto response = rig.api.handle(tail_request());
    REQUIRE(response.stream);
    TailRig::run(*response.stream, 1);  // the opening comment
    for (int i = 0; i < 2; ++i)
        rig.feeds.script->reads.push_back([]() -> std::vector<TailEvent> { throw DatabaseUnavailable("gone"); });
    rig.feeds.script->reads.push_back([] { return events(9, 1); });
    bool going = false;
    const auto written = TailRig::run(*response.stream, 3, &going);
    CHECK(going);
    CHECK(written ==
          "event: outage\ndata: {\"error\":\"database unavailable: gone\"}\n\n"
          "event: resumed\ndata: {}\n\n"
          "id: 7:9\nevent: event\ndata: {\"seq\":9}\n\n");
}

TEST_CASE("console tail: keep-alive comments when nothing was sent; a client gone or a stop ends it", "[console]") {
    TailRig rig;
    rig.service.timing.keep_alive = 0ms;  // always due
    auto response = rig.api.handle(tail_request());
    REQUIRE(response.stream);
    auto& stream = *response.stream;
    CHECK(TailRig::run(stream, 2) == ": tail >\n\n: keep-alive\n\n");
    CHECK_FALSE(stream.step([](std::string_view) { return false; }));  // the client went
    // A connection closed is noticed after a wait, before any write.
    bool wrote = false;
    CHECK_FALSE(stream.step(
        [&](std::string_view) {
            wrote = true;
            return true;
        },
        [] { return false; }));
    CHECK_FALSE(wrote);
    rig.stop.request_stop();
    bool going = true;
    CHECK(TailRig::run(stream, 1, &going).empty());
    CHECK_FALSE(going);
}
