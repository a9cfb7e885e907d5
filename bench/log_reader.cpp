// tributary-bench-log-reader: one consumer of a group that reads a growing
// log until told to stop, timing every read (bench/log).
//
//   tributary-bench-log-reader [--next] URL GROUP BATCH STOP_FILE
//
// Reads as bench/consume does: consumer_read + consumer_ack (rows), or with
// --next consumer_next (one call, acking the previous batch). When a read
// finds nothing it waits 50 ms. It ends once STOP_FILE exists and a read
// found nothing (the log is drained). One line per read that returned
// events, on stdout:
//   <unix time, s> <last seq> <events> <µs of the read call>
// Exit 1 on a database error or a refused ack, 2 on bad usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <pqxx/pqxx>

#include "postgres/batch_events_json.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Read {
    long long last_seq = 0;
    long long events = 0;
    double us = 0;
};

double micros_since(Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Rows: a read, then its ack (untimed). No value: nothing to read.
class RowReader {
public:
    RowReader(pqxx::connection& connection, std::string group) : connection_(connection), group_(std::move(group)) {
        connection_.prepare("read",
                            "SELECT batch_id, lease_token::text, seq FROM tributary.consumer_read($1, 'bench', $2)");
        connection_.prepare("ack", "SELECT tributary.consumer_ack($1, $2::uuid)");
    }
    std::optional<Read> read(int batch) {
        pqxx::nontransaction tx(connection_);
        const auto start = Clock::now();
        const auto rows = tx.exec_prepared("read", group_, batch);
        const double us = micros_since(start);
        if (rows.empty()) return std::nullopt;
        if (!tx.exec_prepared1("ack", rows[0][0].as<long long>(), rows[0][1].as<std::string>())[0].as<bool>())
            throw std::runtime_error("an ack was refused");
        return Read{rows[rows.size() - 1][2].as<long long>(), static_cast<long long>(rows.size()), us};
    }

private:
    pqxx::connection& connection_;
    std::string group_;
};

// consumer_next: each call acks the previous batch and leases the next.
class NextReader {
public:
    NextReader(pqxx::connection& connection, std::string group) : connection_(connection), group_(std::move(group)) {
        connection_.prepare("next",
                            "SELECT batch_id, lease_token::text, events::text, previous_acked"
                            " FROM tributary.consumer_next($1, 'bench', $2, $3, $4::uuid)");
    }
    std::optional<Read> read(int batch) {
        pqxx::nontransaction tx(connection_);
        const auto start = Clock::now();
        const auto row = tx.exec_prepared1("next", group_, batch, previous_id_, previous_token_);
        const double us = micros_since(start);
        if (previous_id_ && !row[3].as<bool>()) throw std::runtime_error("an ack was refused");
        previous_id_.reset();
        previous_token_.reset();
        if (row[0].is_null()) return std::nullopt;
        previous_id_ = row[0].as<long long>();
        previous_token_ = row[1].as<std::string>();
        const auto events = tributary::postgres::read_batch_events(std::string_view(row[2].c_str(), row[2].size()));
        return Read{events.back().seq, static_cast<long long>(events.size()), us};
    }

private:
    pqxx::connection& connection_;
    std::string group_;
    std::optional<long long> previous_id_;
    std::optional<std::string> previous_token_;
};

template <typename Reader>
void read_until_stopped(Reader& reader, int batch, const std::filesystem::path& stop_file) {
    for (;;) {
        const bool stop_asked = std::filesystem::exists(stop_file);  // before the read: a drained log then ends it
        if (const auto r = reader.read(batch)) {
            const double now =
                std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
            std::printf("%.3f %lld %lld %.0f\n", now, r->last_seq, r->events, r->us);
        } else if (stop_asked) {
            return;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool next = argc > 1 && std::strcmp(argv[1], "--next") == 0;
    if (next) {
        --argc;
        ++argv;
    }
    if (argc != 5) {
        std::fprintf(stderr, "usage: tributary-bench-log-reader [--next] URL GROUP BATCH STOP_FILE\n");
        return 2;
    }
    const int batch = std::atoi(argv[3]);
    try {
        pqxx::connection connection(argv[1]);
        if (next) {
            NextReader reader(connection, argv[2]);
            read_until_stopped(reader, batch, argv[4]);
        } else {
            RowReader reader(connection, argv[2]);
            read_until_stopped(reader, batch, argv[4]);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tributary-bench-log-reader: %s\n", e.what());
        return 1;
    }
    return 0;
}
