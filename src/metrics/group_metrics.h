#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "core/group_figures.h"

namespace tributary::metrics {

/// The consumer groups' Prometheus gauges, served by the console (which
/// reads the groups anyway), and whether its last read of them worked.
/// Each read replaces every group's series: a group that is gone leaves no
/// series behind. A failed read keeps the last good read's series (see
/// docs/operations.md: a database blip must not resolve and refire every
/// group alert) and sets tributary_console_database_up to 0. Thread-safe.
class GroupMetrics {
public:
    explicit GroupMetrics(const std::string& version);
    ~GroupMetrics();

    /// A read of the groups worked: these are all of them.
    void read(const std::vector<GroupFigures>& groups, double unix_time);
    /// A read of the groups failed: the series stay as they were.
    void read_failed();
    /// The exposition text (Prometheus text format 0.0.4).
    std::string scrape();

private:
    struct PerGroup;
    struct PerLane;

    void read_lanes(const std::string& group, const GroupFigures& figures, PerGroup& per);
    void remove_lane(PerLane& lane);

    std::shared_ptr<prometheus::Registry> registry_;
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<PerGroup>> groups_;
    prometheus::Family<prometheus::Gauge>& events_behind_;
    prometheus::Family<prometheus::Gauge>& capped_;
    prometheus::Family<prometheus::Gauge>& oldest_age_;
    prometheus::Family<prometheus::Gauge>& in_flight_;
    prometheus::Family<prometheus::Gauge>& retries_;
    prometheus::Family<prometheus::Gauge>& dead_letters_;
    prometheus::Family<prometheus::Gauge>& lanes_;
    prometheus::Family<prometheus::Gauge>& unheld_lanes_;
    prometheus::Family<prometheus::Gauge>& lane_behind_;
    prometheus::Family<prometheus::Gauge>& lane_capped_;
    prometheus::Family<prometheus::Gauge>& lane_oldest_age_;
    prometheus::Family<prometheus::Gauge>& lane_held_;
    prometheus::Gauge& database_up_;
    prometheus::Gauge& last_read_;
};

}  // namespace tributary::metrics
