#pragma once

// Hostile episodes: a hostile-capable source plays one bad response for a
// while, then heals. Before it heals, `status` must show, for a source that
// was asked since the episode began, the state docs/sources.md documents and a
// last_error naming the cause, recorded after the episode began.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sources.h"

namespace tributary::crash {

class Supervisor;
class Tally;

class HostileEpisodes {
public:
    HostileEpisodes(Sources& sources, Tally& tally, const Supervisor& supervisor, std::string tributary_bin,
                    std::string db_url, std::chrono::milliseconds source_timeout);

    /// Starts an episode on a hostile-capable source that is idle and
    /// healthy (state ok, no failures: a source still backing off from the
    /// last episode would double its backoff). `long_backoff_ok`: modes that
    /// make the loader wait 30-60 s are allowed. Returns false when no source
    /// is free.
    bool begin(std::mt19937_64& random, bool long_backoff_ok, std::chrono::milliseconds duration);
    /// Ends the episodes that are due: checks status, then heals.
    void tick();
    /// Ends every episode now.
    void end_all();
    /// How many sources are hostile right now (read by the monitor).
    int active() const { return active_.load(); }

private:
    struct Episode {
        std::string source;
        HostileMode mode;
        long long began_us = 0;  ///< CLOCK_REALTIME, as the source server stamps arrivals
        double began_s = 0;      ///< elapsed_s()
        std::chrono::steady_clock::time_point end_at;
        int rechecks = 0;
    };
    enum class Verdict { pass, not_asked, retry, inconclusive, fail };

    std::optional<std::map<std::string, nlohmann::json>> status() const;
    Verdict check(Episode& episode, std::string& evidence);
    void finish(const Episode& episode, Verdict verdict, const std::string& evidence);

    Sources& sources_;
    Tally& tally_;
    const Supervisor& supervisor_;
    std::string tributary_bin_;
    std::string db_url_;
    std::chrono::milliseconds source_timeout_;
    std::vector<Episode> episodes_;
    std::atomic<int> active_{0};
};

}  // namespace tributary::crash
