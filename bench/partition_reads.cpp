// tributary-bench-partition-reads: how long one group's read of BATCH events
// takes from a fixed place in the log (bench/partitions). The read is the one
// bench/consume times, through the same prepared calls:
//
//   tributary-bench-partition-reads URL GROUP CURSOR_TX CURSOR_SEQ BATCH READS
//
// For each API (consumer_next, then consumer_read), WARMUP untimed reads and
// then READS timed ones, each from the same cursor: before every read the
// group's cursor (every lane's, for a group of lanes) is set back to
// (CURSOR_TX, CURSOR_SEQ), after it the batch is acked; neither is timed. Same session throughout, so the functions'
// plans are cached (generic), as in a consumer's long-lived connection. Prints one line per API:
//   api=next reads=<n> events=<per read> median_us=<..> p90_us=<..> mean_us=<..>
// Exit 1 on a database error or a read that did not return BATCH events, 2 on
// bad usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "postgres/batch_events_json.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int warmup_reads = 10;  // past plpgsql's five custom plans, into the generic one

struct Place {
    std::string group;
    std::string cursor_tx;
    long long cursor_seq;
    int batch;
};

void prepare(pqxx::connection& connection) {
    // Owner-only: sets the group's cursor, and every lane's for a group of
    // lanes, which no API does.
    connection.prepare("rewind",
                       "WITH g AS (UPDATE tributary.consumer_groups SET cursor_tx = $2::xid8, cursor_seq = $3"
                       "            WHERE name = $1 RETURNING id)"
                       " UPDATE tributary.group_lanes l SET cursor_tx = $2::xid8, cursor_seq = $3"
                       "   FROM g WHERE l.group_id = g.id");
    connection.prepare("next",
                       "SELECT batch_id, lease_token::text, events::text, previous_acked"
                       " FROM tributary.consumer_next($1, 'bench', $2, NULL, NULL)");
    connection.prepare(
        "read", "SELECT batch_id, lease_token::text, seq, payload::text FROM tributary.consumer_read($1, 'bench', $2)");
    connection.prepare("ack", "SELECT tributary.consumer_ack($1, $2::uuid)");
}

// One timed read from the place; returns its microseconds. Acks the batch after.
double timed_read(pqxx::connection& connection, const Place& place, bool next) {
    pqxx::nontransaction tx(connection);
    tx.exec_prepared0("rewind", place.group, place.cursor_tx, place.cursor_seq);
    const auto start = Clock::now();
    const auto rows = tx.exec_prepared(next ? "next" : "read", place.group, place.batch);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (rows.empty() || rows[0][0].is_null()) throw std::runtime_error("the read found no events");
    if (!next && static_cast<int>(rows.size()) != place.batch)
        throw std::runtime_error("consumer_read returned " + std::to_string(rows.size()) + " events");
    if (next &&
        tributary::postgres::read_batch_events(std::string_view(rows[0][2].c_str(), rows[0][2].size())).size() !=
            static_cast<std::size_t>(place.batch))
        throw std::runtime_error("consumer_next returned another number of events than asked");
    if (!tx.exec_prepared1("ack", rows[0][0].as<long long>(), rows[0][1].as<std::string>())[0].as<bool>())
        throw std::runtime_error("the ack was refused");
    return us;
}

void report(const char* api, std::vector<double> us, int batch) {
    std::sort(us.begin(), us.end());
    const double mean = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
    std::printf("api=%s reads=%zu events=%d median_us=%.0f p90_us=%.0f mean_us=%.0f\n", api, us.size(), batch,
                us[us.size() / 2], us[us.size() * 9 / 10], mean);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(stderr, "usage: tributary-bench-partition-reads URL GROUP CURSOR_TX CURSOR_SEQ BATCH READS\n");
        return 2;
    }
    const Place place{argv[2], argv[3], std::atoll(argv[4]), std::atoi(argv[5])};
    const int reads = std::atoi(argv[6]);
    if (place.batch <= 0 || reads <= 0) {
        std::fprintf(stderr, "tributary-bench-partition-reads: BATCH and READS must be positive\n");
        return 2;
    }
    try {
        pqxx::connection connection(argv[1]);
        prepare(connection);
        for (const bool next : {true, false}) {
            for (int i = 0; i < warmup_reads; ++i) timed_read(connection, place, next);
            std::vector<double> us;
            us.reserve(static_cast<std::size_t>(reads));
            for (int i = 0; i < reads; ++i) us.push_back(timed_read(connection, place, next));
            report(next ? "next" : "read", us, place.batch);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tributary-bench-partition-reads: %s\n", e.what());
        return 1;
    }
    return 0;
}
