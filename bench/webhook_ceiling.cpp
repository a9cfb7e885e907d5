// tributary-bench-webhook-ceiling: the ceiling bench/webhook measures the
// receiver against: the same inserts straight into PostgreSQL, one
// transaction per request, over CONNECTIONS connections, with no HTTP and no
// group commit in between.
//
//   tributary-bench-webhook-ceiling DB_URL MODE SOURCE_ID CONNECTIONS SECONDS KEY_PREFIX
//
// MODE is
//   receiver-store  one tributary.receiver_store call with one request of one
//                   event (what the receiver does for a group of one)
//   insert          INSERT INTO bench_inbox ... ON CONFLICT DO NOTHING, the
//                   plain insert a hand-written endpoint would do into its own
//                   table (bench/webhook creates it: the events' columns, a
//                   unique (source_id, event_key); since the log is
//                   partitioned, tributary.events has no unique key to
//                   conflict on: that is tributary.event_keys)
// Each thread keeps one connection; every statement runs on its own (its own
// transaction, committed synchronously as the server is configured). The
// events are those the webhook client posts (bench/load_run.h), the same size.
// Prints the line bench/load_run.h prints: 201 for a stored event, 200 for one
// stored already, -1 (errors=) for a failed statement. Exit 1 when a
// connection could not be opened, 2 on bad usage.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <pqxx/pqxx>

#include "load_run.h"

namespace {

class Inserter {
public:
    Inserter(const std::string& url, bool receiver_store, int source_id)
        : connection_(std::make_unique<pqxx::connection>(url)), receiver_store_(receiver_store), source_id_(source_id) {
        if (receiver_store_)
            connection_->prepare("store",
                                 "SELECT stored FROM tributary.receiver_store('{1}', ARRAY[$1::int], ARRAY[$2::text],"
                                 " $3::jsonb)");
        else
            connection_->prepare("store",
                                 "INSERT INTO bench_inbox (source_id, event_key, payload) VALUES ($1, $2, $3::jsonb)"
                                 " ON CONFLICT (source_id, event_key) DO NOTHING");
    }

    int send(const std::string& key, long long n, std::string& error) {
        const std::string payload = bench::event_payload(key, n);
        try {
            pqxx::nontransaction tx(*connection_);
            if (receiver_store_) {
                // The payloads travel as one JSON array, as the receiver sends a group's.
                const auto row = tx.exec_prepared1("store", source_id_, key, "[" + payload + "]");
                return row[0].as<long long>(0) > 0 ? 201 : 200;
            }
            return tx.exec_prepared("store", source_id_, key, payload).affected_rows() > 0 ? 201 : 200;
        } catch (const std::exception& e) {
            if (error.empty()) error = e.what();
            return -1;
        }
    }

    long long connects() const { return 1; }

private:
    std::unique_ptr<pqxx::connection> connection_;
    bool receiver_store_;
    int source_id_;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(
            stderr,
            "usage: tributary-bench-webhook-ceiling DB_URL receiver-store|insert SOURCE_ID CONNECTIONS SECONDS "
            "KEY_PREFIX\n");
        return 2;
    }
    const std::string url = argv[1];
    const std::string mode = argv[2];
    if (mode != "receiver-store" && mode != "insert") {
        std::fprintf(stderr, "tributary-bench-webhook-ceiling: MODE is receiver-store or insert, not '%s'\n", argv[2]);
        return 2;
    }
    const int source_id = std::atoi(argv[3]);
    bench::Options options;
    options.connections = std::atoi(argv[4]);
    options.seconds = std::atof(argv[5]);
    options.key_prefix = argv[6];
    if (options.connections < 1 || options.seconds <= 0) {
        std::fprintf(stderr, "tributary-bench-webhook-ceiling: CONNECTIONS and SECONDS must be positive\n");
        return 2;
    }
    return bench::run_load(options, [&](int) { return Inserter(url, mode == "receiver-store", source_id); });
}
