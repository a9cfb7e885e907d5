#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tributary::webhook {

/// One event of a pushed request, ready to store.
struct PushedEvent {
    std::string key;      ///< its key within the source (1 to 1024 bytes)
    std::string payload;  ///< valid JSON text, as received
};

/// What one accepted request stores: all of it or nothing.
struct PushedBatch {
    int source_id = 0;
    std::string source;  ///< its name, for logs
    std::vector<PushedEvent> events;
};

/// The database could not be reached, or the transaction failed for a reason
/// that is not the requests' (a connection lost mid-commit: the outcome is
/// unknown). Every request of the call is answered 503: the sender retries,
/// and a key stored already stores nothing the second time.
struct StoreUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Port: stores the events of many requests in one transaction (a group
/// commit). Adapter: postgres::PostgresPushedEvents (tributary.receiver_store);
/// fake: tests' FakePushedEvents; both pass tests/integration/test_pushed_events_contract.cpp.
class PushedEventStore {
public:
    virtual ~PushedEventStore() = default;
    /// Stores `requests` in one transaction and returns, per request in the
    /// same order, how many of its events were stored (an event whose key
    /// its source has already, or that an earlier event of this call had,
    /// stores nothing), or nothing when its source no longer takes pushes
    /// (removed, paused, no longer pushed): none of it stored. Throws
    /// StoreUnavailable when nothing can be said of the outcome.
    virtual std::vector<std::optional<std::size_t>> store(const std::vector<const PushedBatch*>& requests) = 0;
};

}  // namespace tributary::webhook
