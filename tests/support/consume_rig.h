#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_database.h"

namespace tributary::testing {

/// A database with sources and events inserted directly (no loader), a
/// scratch directory for what `--exec` commands write, and helpers to read
/// it back as NDJSON.
class ConsumeRig {
public:
    ConsumeRig();
    ~ConsumeRig();

    const std::string& url() const { return db_.url(); }
    const TestDatabase& db() const { return db_; }

    /// Registers sources by name; returns nothing (ids are the database's).
    void add_sources(const std::vector<std::string>& names);
    /// Inserts `count` events for `source` with event ids after the ones
    /// it has, payload {"n": id, "source": name, "big": 30-digit number}
    /// (plus "poison": true for the ids in `poison`). One transaction.
    void add_events(const std::string& source, int count, const std::vector<int>& poison = {});
    /// Registers a source keyed by text, as `source add NAME ... --paginate
    /// after-key --records /data --key /key` does.
    void add_keyed_source(const std::string& name);
    /// Inserts an event per key for a source keyed by text (event_key set,
    /// event_id NULL), in the order given, payload {"key": key, "source":
    /// name} (plus "poison": true for the keys in `poison`). One transaction.
    void add_keyed_events(const std::string& source, const std::vector<std::string>& keys,
                          const std::vector<std::string>& poison = {});
    /// seq of every event of sources matching a SQL LIKE pattern, ascending.
    std::vector<std::int64_t> seqs(const std::string& source_like = "%") const;

    /// A path in the scratch directory.
    std::string path(const std::string& name) const { return dir_ + "/" + name; }
    /// The NDJSON lines of a file, parsed (a partial last line is left out).
    std::vector<nlohmann::json> lines(const std::string& name) const;
    /// How many times each seq appears in an NDJSON file.
    std::map<std::int64_t, int> seq_counts(const std::string& name) const;
    std::string read(const std::string& name) const;

    /// tributary.group_status of one group, as `group list --json` prints it.
    nlohmann::json group(const std::string& name) const;

private:
    TestDatabase db_;
    std::string dir_;
};

/// Polls `done` every 50 ms until true or `timeout`; returns the last answer.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);

}  // namespace tributary::testing
