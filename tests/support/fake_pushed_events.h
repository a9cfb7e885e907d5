#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "webhook/pushed_events.h"
#include "webhook/pushed_source_catalog.h"

namespace tributary::fakes {

/// PushedEventStore in memory with tributary.receiver_store's rules
/// (sql/internal/70_receiver_store.sql): one call is one transaction, keys are
/// per source, the first occurrence of a key wins (an earlier event of the
/// same call included, credited to its request), and a request whose source
/// does not accept stores nothing and gets nullopt. Thread-safe: the
/// receiver's committer calls it from its own thread while a test reads it.
class FakePushedEventStore : public webhook::PushedEventStore {
public:
    /// What one store() call carried, for tests of the group commit.
    struct Call {
        std::vector<int> sources;        ///< per request, its source id
        std::vector<std::size_t> sizes;  ///< per request, its number of events
        std::size_t events() const;
    };

    std::vector<std::optional<std::size_t>> store(const std::vector<const webhook::PushedBatch*>& requests) override;

    /// Which sources take pushes: all of them until told otherwise.
    void set_accepting(int source_id, bool accepting);
    /// While set, every call throws StoreUnavailable and stores nothing.
    void set_unavailable(bool unavailable);
    /// A call carrying an event with this key throws std::runtime_error and
    /// stores nothing (a request the database refuses for what it holds).
    void poison_key(std::string key);

    /// From now on, calls wait at a gate until release() (a commit on the
    /// wire, for tests of what gathers meanwhile).
    void hold();
    void release();
    /// Blocks until `n` calls in all have reached the gate (or gone through it).
    void wait_for_calls(std::size_t n);

    std::vector<Call> calls() const;
    /// The source's stored events: key -> payload.
    std::map<std::string, std::string> events(int source_id) const;
    std::size_t stored(int source_id) const;

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::set<int> refusing_;
    bool unavailable_ = false;
    std::set<std::string> poisoned_;
    bool held_ = false;
    std::size_t arrived_ = 0;
    std::vector<Call> calls_;
    std::map<int, std::map<std::string, std::string>> events_;
};

/// PushedSourceCatalog whose sources a test sets; can be told to fail.
class FakePushedSources : public webhook::PushedSourceCatalog {
public:
    explicit FakePushedSources(std::vector<webhook::PushedSource> sources = {}) : sources_(std::move(sources)) {}

    std::vector<webhook::PushedSource> pushed_sources() override;

    void set(std::vector<webhook::PushedSource> sources);
    /// While set, reads throw StoreUnavailable.
    void set_unavailable(bool unavailable);
    std::size_t reads() const;

private:
    mutable std::mutex mutex_;
    std::vector<webhook::PushedSource> sources_;
    bool unavailable_ = false;
    std::size_t reads_ = 0;
};

}  // namespace tributary::fakes
