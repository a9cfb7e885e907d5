#pragma once

// A consumer of a consumer group, calling the SQL API (sql/api/) the way any
// client would: libpqxx, one autocommit statement per call. Shared by the
// tests of consumer_read/consumer_ack and of consumer_next.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "support/test_database.h"

namespace tributary::testing {

/// A batch as a consumer holds it, whichever call leased it.
struct Batch {
    std::int64_t id = 0;
    std::string token;
    int delivery = 0;
    std::vector<std::int64_t> seqs;
    std::vector<std::string> sources;
    std::vector<std::optional<std::int64_t>> event_ids;  ///< none for a source keyed by text
    std::vector<std::string> event_keys;
    std::vector<std::string> payloads;  ///< as the consumer got each payload's text
    std::vector<int> deliveries;        ///< each event's own delivery count

    bool empty() const { return seqs.empty(); }
    bool holds(std::int64_t seq) const { return std::find(seqs.begin(), seqs.end(), seq) != seqs.end(); }
};

/// What one consumer_next call returned.
struct Next {
    Batch batch;                         ///< empty: no batch now
    bool batch_id_null = false;          ///< batch_id (and lease_token, delivery) came back NULL
    std::string events;                  ///< the events column, as text
    std::optional<bool> previous_acked;  ///< NULL when no previous batch was named
    std::optional<int> lane;             ///< the batch's lane in a group of lanes; NULL otherwise
};

/// Event ids of a source read after-id, as a batch holds them.
std::vector<std::optional<std::int64_t>> ids(std::initializer_list<std::int64_t> values);

/// One consumer of one group, on a connection of its own.
class Consumer {
public:
    Consumer(const std::string& url, std::string group, std::string name);

    /// consumer_read: a batch as rows.
    Batch read(int max = 1000);
    /// Reads until a batch comes, for up to `patience`: the read watermark is
    /// cluster-wide, so any transaction open anywhere (an autovacuum ANALYZE)
    /// holds fresh events back for a moment.
    Batch read_soon(int max = 1000, std::chrono::milliseconds patience = std::chrono::seconds(5));

    /// consumer_next: acks `previous` (when given) and leases the next batch
    /// as one JSON array.
    Next next(int max = 1000, const Batch* previous = nullptr);
    /// consumer_next until a batch comes, for up to `patience` (see read_soon).
    /// Only the first call names `previous`.
    Next next_soon(int max = 1000, const Batch* previous = nullptr,
                   std::chrono::milliseconds patience = std::chrono::seconds(5));

    bool ack(const Batch& batch, const std::vector<std::int64_t>& failed = {}, const std::string& error = "failed");
    bool fail(const Batch& batch, const std::string& error);
    bool extend(const Batch& batch, const std::string& lease);

private:
    pqxx::connection connection_;
    std::string group_;
    std::string name_;
};

/// A source (kind after-id) named `name`; returns its id.
int add_source(const TestDatabase& db, const std::string& name);

/// Inserts events first_id.. of a source in the caller's transaction; returns their seqs.
std::vector<std::int64_t> insert_events(pqxx::transaction_base& tx, int source_id, std::int64_t first_id, int count,
                                        const std::string& payload = "{}");

/// The same, in a transaction of its own, committed.
std::vector<std::int64_t> commit_events(const TestDatabase& db, int source_id, std::int64_t first_id, int count,
                                        const std::string& payload = "{}");

/// The SQLSTATE `run` failed with ("none" when it did not fail).
template <typename F>
std::string sqlstate_of(F run) {
    try {
        run();
    } catch (const pqxx::sql_error& e) {
        return e.sqlstate();
    }
    return "none";
}

/// Reads and acks until nothing comes for a while; returns "source:event_key" of everything acked.
std::multiset<std::string> drain(Consumer& consumer, std::chrono::milliseconds quiet = std::chrono::milliseconds(300));

/// A group's row of tributary.group_status.
struct GroupStatus {
    std::int64_t events_behind = -1;
    int batches_in_flight = -1;
    int retries_waiting = -1;
    int dead_letters = -1;
    double oldest_age_s = -1;  // -1: NULL
};

GroupStatus status_of(const TestDatabase& db, const std::string& group);

}  // namespace tributary::testing
