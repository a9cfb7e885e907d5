// tributary-bench-consume: drain consumer groups with the plain SQL API, as
// any client would, and say how fast. The handler does nothing.
//
//   tributary-bench-consume [--next] URL BATCH CONSUMERS GROUP...
//
// Starts CONSUMERS threads per GROUP, each with its own connection, each
// looping until three reads in a row (10 ms apart) found nothing:
//   default   consumer_read(GROUP, name, BATCH), one row per event, then
//             consumer_ack(batch, token): two calls per batch.
//   --next    consumer_next(GROUP, name, BATCH, previous batch, its token): one
//             call per batch, which acks the previous one; the events arrive as
//             one JSON array, read with the reader `tributary consume` uses
//             (tributary::postgres::read_batch_events: one pass, payloads cut
//             out as printed; nlohmann's DOM would cost a C++ client 0.2 s
//             of CPU per 100 000 events, four times as much).
// Prints one line per group:
//   group=<name> consumers=<n> events=<acked> batches=<n> lost_acks=<n> seconds=<first read to last ack>
// Exit 1 on a database error, 2 on bad usage.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "postgres/batch_events_json.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
    std::mutex mutex;
    long long events = 0;
    long long batches = 0;
    long long lost_acks = 0;
    Clock::time_point last_ack{};

    void acked(long long batch_events) {
        std::lock_guard<std::mutex> lock(mutex);
        events += batch_events;
        ++batches;
        last_ack = std::max(last_ack, Clock::now());
    }
    void lost() {
        std::lock_guard<std::mutex> lock(mutex);
        ++lost_acks;
    }
};

// One consumer's loop: step() handles one batch and says whether it found any; three empty steps in a row end it.
template <typename Step>
void until_idle(Step step) {
    int idle = 0;
    while (idle < 3) {
        if (step()) {
            idle = 0;
        } else {
            ++idle;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
}

// consumer_read + consumer_ack: the row-shaped API.
void consume_rows(pqxx::connection& connection, const std::string& group, const std::string& name, int batch,
                  Tally& tally) {
    connection.prepare(
        "read", "SELECT batch_id, lease_token::text, seq, payload::text FROM tributary.consumer_read($1, $2, $3)");
    connection.prepare("ack", "SELECT tributary.consumer_ack($1, $2::uuid)");
    until_idle([&] {
        pqxx::nontransaction tx(connection);
        const auto rows = tx.exec_prepared("read", group, name, batch);
        if (rows.empty()) return false;
        std::size_t bytes = 0;  // "handle" the events: touch every payload
        for (const auto& row : rows) bytes += row[3].size();
        if (bytes == 0) std::abort();
        if (tx.exec_prepared("ack", rows[0][0].as<long long>(), rows[0][1].as<std::string>())[0][0].as<bool>())
            tally.acked(static_cast<long long>(rows.size()));
        else tally.lost();
        return true;
    });
}

// consumer_next: one call per batch, acking the previous one; the batch is one JSON array.
void consume_next(pqxx::connection& connection, const std::string& group, const std::string& name, int batch,
                  Tally& tally) {
    connection.prepare("next",
                       "SELECT batch_id, lease_token::text, events::text, previous_acked"
                       " FROM tributary.consumer_next($1, $2, $3, $4, $5::uuid)");
    std::optional<long long> previous_id;
    std::optional<std::string> previous_token;
    long long previous_events = 0;
    until_idle([&] {
        pqxx::nontransaction tx(connection);
        const auto row = tx.exec_prepared1("next", group, name, batch, previous_id, previous_token);
        if (previous_id) {
            if (row[3].as<bool>()) tally.acked(previous_events);
            else tally.lost();
        }
        if (row[0].is_null()) {
            previous_id.reset();
            previous_token.reset();
            return false;
        }
        previous_id = row[0].as<long long>();
        previous_token = row[1].as<std::string>();
        previous_events = static_cast<long long>(
            tributary::postgres::read_batch_events(std::string_view(row[2].c_str(), row[2].size())).size());
        return true;
    });
}

void consume(bool next, const std::string& url, const std::string& group, const std::string& name, int batch,
             Tally& tally, std::atomic<bool>& failed) {
    try {
        pqxx::connection connection(url);
        if (next) consume_next(connection, group, name, batch, tally);
        else consume_rows(connection, group, name, batch, tally);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tributary-bench-consume: %s (%s): %s\n", group.c_str(), name.c_str(), e.what());
        failed = true;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool next = argc > 1 && std::strcmp(argv[1], "--next") == 0;
    if (next) {
        --argc;
        ++argv;
    }
    if (argc < 5) {
        std::fprintf(stderr, "usage: tributary-bench-consume [--next] URL BATCH CONSUMERS GROUP...\n");
        return 2;
    }
    const std::string url = argv[1];
    const int batch = std::atoi(argv[2]);
    const int consumers = std::atoi(argv[3]);
    std::vector<std::string> groups(argv + 4, argv + argc);
    std::vector<Tally> tallies(groups.size());
    std::atomic<bool> failed{false};

    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (int c = 0; c < consumers; ++c)
            threads.emplace_back(consume, next, url, groups[g], "bench-" + std::to_string(c), batch,
                                 std::ref(tallies[g]), std::ref(failed));
    for (auto& t : threads) t.join();

    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto& t = tallies[g];
        const double seconds = t.batches ? std::chrono::duration<double>(t.last_ack - start).count() : 0.0;
        std::printf("group=%s consumers=%d events=%lld batches=%lld lost_acks=%lld seconds=%.3f\n", groups[g].c_str(),
                    consumers, t.events, t.batches, t.lost_acks, seconds);
    }
    return failed ? 1 : 0;
}
