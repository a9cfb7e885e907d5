// The process adapter: a real /bin/sh per batch, no database.

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <thread>

#include <csignal>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "process/exec_batch_handler.h"
#include "process/ndjson.h"

using namespace tributary;
using namespace tributary::process;
using namespace std::chrono_literals;

namespace {

LeasedBatch batch_of(int n, std::size_t payload_size = 10) {
    LeasedBatch batch{42, "token", 2, {}};
    for (int i = 1; i <= n; ++i)
        batch.events.push_back(
            LoggedEvent{100 + i, "orders.eu", i, std::to_string(i),
                        "{\"n\": " + std::to_string(i) + ", \"pad\": \"" + std::string(payload_size, 'x') + "\"}"});
    return batch;
}

std::string temp_path(const std::string& name) {
    return "/tmp/tributary-unit-" + std::to_string(getpid()) + "-" + name;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Running, not a zombie waiting for a reaper (pid 1 here may never reap).
bool alive(pid_t pid) {
    if (kill(pid, 0) != 0) return false;
    const auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("ndjson: one line per event, the payload as stored, big numbers intact") {
    LeasedBatch batch{1, "t", 3, {LoggedEvent{7, "a.b", 9, "9", "{\"big\": 123456789012345678901234567890}"}}};
    CHECK(batch_ndjson(batch) ==
          "{\"seq\":7,\"source\":\"a.b\",\"event_id\":9,\"event_key\":\"9\","
          "\"payload\":{\"big\": 123456789012345678901234567890},\"delivery\":3}\n");
}

TEST_CASE("ndjson: an event of a source keyed by text has a null event_id and its key as a JSON string") {
    LeasedBatch batch{1,
                      "t",
                      1,
                      {LoggedEvent{8, "stripe.events", std::nullopt, R"(evt_"1"\x)", R"({"id":"evt_1"})"},
                       LoggedEvent{9, "crm.deals", std::nullopt, R"(["42","2024-05-01T10:00:00Z"])", "{}"}}};
    const auto ndjson = batch_ndjson(batch);
    CHECK(ndjson ==
          R"({"seq":8,"source":"stripe.events","event_id":null,"event_key":"evt_\"1\"\\x","payload":{"id":"evt_1"},)"
          R"("delivery":1})"
          "\n"
          R"({"seq":9,"source":"crm.deals","event_id":null,"event_key":"[\"42\",\"2024-05-01T10:00:00Z\"]",)"
          R"("payload":{},"delivery":1})"
          "\n");
    std::istringstream lines(ndjson);
    for (std::string line; std::getline(lines, line);) CHECK(nlohmann::json::parse(line).at("event_id").is_null());
}

TEST_CASE("exec handler: exit 0 is success, and the command reads the batch as NDJSON on stdin") {
    const auto out = temp_path("stdin");
    ExecBatchHandler handler("cat > " + out);
    StopSignal abandon;
    const auto batch = batch_of(3);
    const auto result = handler.handle(batch, abandon);
    CHECK(result.outcome == HandlerResult::Outcome::success);
    CHECK(slurp(out) == batch_ndjson(batch));
    unlink(out.c_str());
}

TEST_CASE("exec handler: a non-zero exit fails the batch with the status and the end of stderr") {
    ExecBatchHandler handler("cat >/dev/null; echo first >&2; echo 'poison found' >&2; exit 3", 13);
    StopSignal abandon;
    const auto result = handler.handle(batch_of(2), abandon);
    CHECK(result.outcome == HandlerResult::Outcome::failure);
    CHECK(result.error == "command exited with status 3; stderr: ...poison found\n");
}

TEST_CASE("exec handler: a command killed by a signal fails the batch") {
    ExecBatchHandler handler("kill -KILL $$");
    StopSignal abandon;
    const auto result = handler.handle(batch_of(1), abandon);
    CHECK(result.outcome == HandlerResult::Outcome::failure);
    CHECK(result.error.find("killed by signal 9") != std::string::npos);
}

TEST_CASE("exec handler: a command that never reads a big stdin does not block us") {
    ExecBatchHandler handler("sleep 0.2; exit 0");
    StopSignal abandon;
    // 2 MB, far over a pipe's buffer: a handler that insisted on writing it all would never return.
    const auto result = handler.handle(batch_of(200, 10000), abandon);
    CHECK(result.outcome == HandlerResult::Outcome::success);
}

TEST_CASE("exec handler: abandon kills the command's whole process group") {
    const auto pid_file = temp_path("grandchild");
    ExecBatchHandler handler("sleep 60 & echo $! > " + pid_file + "; wait");
    StopSignal abandon;
    std::thread trigger([&] {
        std::this_thread::sleep_for(300ms);
        abandon.request_stop();
    });
    const auto result = handler.handle(batch_of(1), abandon);
    trigger.join();
    CHECK(result.outcome == HandlerResult::Outcome::abandoned);
    const auto grandchild = static_cast<pid_t>(std::stol(slurp(pid_file)));
    std::this_thread::sleep_for(100ms);
    CHECK_FALSE(alive(grandchild));
    unlink(pid_file.c_str());
}

TEST_CASE("exec handler: a command that closes stdin early is judged by its exit status") {
    ExecBatchHandler handler("head -c 10 >/dev/null; exit 0");
    StopSignal abandon;
    CHECK(handler.handle(batch_of(100, 5000), abandon).outcome == HandlerResult::Outcome::success);
}

TEST_CASE("exec handler: several batches at once, each with its own child") {
    ExecBatchHandler handler("n=$(wc -l); test \"$n\" -eq 5");
    std::vector<std::thread> threads;
    std::atomic<int> successes{0};
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] {
            StopSignal abandon;
            if (handler.handle(batch_of(5, 20000), abandon).outcome == HandlerResult::Outcome::success) ++successes;
        });
    for (auto& t : threads) t.join();
    CHECK(successes == 4);
}
