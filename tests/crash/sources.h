#pragma once

// The source server of the run: healthy sources that keep producing, and
// hostile-capable ones the scheduler turns bad for a while. Also the table of
// hostile modes with what `status` must say about each.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "source_styles.h"
#include "support/source_server.h"

namespace tributary::crash {

struct HostileMode {
    std::string mode;                 ///< the source server's fault mode
    std::string state;                ///< the state `status` must show
    std::vector<std::string> causes;  ///< last_error must contain one of these
    bool long_backoff;                ///< "failing": the loader waits 30 s and more before asking again
};

/// Every hostile response of docs/design.md §3 the source server can play.
/// Not "too-many": the source server makes up ids past its end for it (a
/// source breaking its promise, which no loader can detect), and the loader
/// is documented to use the first `limit` events, so it would store them.
const std::vector<HostileMode>& hostile_modes();

struct SourcePlan {
    int healthy = 8;
    int hostile_capable = 4;
    int backlog = 3000;
    double rate = 40;     ///< events per second per source
    long max_events = 0;  ///< production cap per source
    int payload_bytes = 200;
    int threads = 64;
};

class Sources {
public:
    explicit Sources(const SourcePlan& plan);

    const std::vector<std::string>& all() const { return all_; }
    const std::vector<std::string>& healthy() const { return healthy_; }
    const std::vector<std::string>& hostile_capable() const { return hostile_capable_; }
    const std::string& base_url() const { return server_.base_url(); }
    /// How the source is read: a style of the rotation for a healthy one, after-id for the others.
    const SourceStyle& style(const std::string& name) const { return *style_.at(name); }
    /// The URL `source add` is given: the route of the source's style.
    std::string url(const std::string& name) const { return base_url() + style(name).path(name); }
    const SourcePlan& plan() const { return plan_; }

    void set_fault(const std::string& name, const std::string& mode) const;
    /// GET /_stats.
    nlohmann::json stats() const;
    /// Events produced so far, per source (from /_stats).
    std::map<std::string, long> produced() const;
    /// GET /_requests?source=NAME.
    nlohmann::json requests(const std::string& name) const;

private:
    SourcePlan plan_;
    std::vector<std::string> all_, healthy_, hostile_capable_;
    std::map<std::string, const SourceStyle*> style_;
    testing::SourceServer server_;
};

}  // namespace tributary::crash
