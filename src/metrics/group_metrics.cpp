#include "group_metrics.h"

#include <set>
#include <sstream>

#include <prometheus/text_serializer.h>

#include "gauge_family.h"

namespace tributary::metrics {

struct GroupMetrics::PerLane {
    prometheus::Gauge* events_behind = nullptr;
    prometheus::Gauge* capped = nullptr;
    prometheus::Gauge* oldest_age = nullptr;
    prometheus::Gauge* held = nullptr;
};

struct GroupMetrics::PerGroup {
    prometheus::Gauge* events_behind = nullptr;
    prometheus::Gauge* capped = nullptr;
    prometheus::Gauge* oldest_age = nullptr;
    prometheus::Gauge* in_flight = nullptr;
    prometheus::Gauge* retries = nullptr;
    prometheus::Gauge* dead_letters = nullptr;
    prometheus::Gauge* lanes = nullptr;
    prometheus::Gauge* unheld_lanes = nullptr;
    std::map<int, PerLane> lane_series;  ///< by lane, for a group of lanes
};

GroupMetrics::GroupMetrics(const std::string& version)
    : registry_(std::make_shared<prometheus::Registry>()),
      events_behind_(
          gauge_family(*registry_, "tributary_group_events_behind",
                       "Events of the group's sources not yet handed out to it (after its cursor), counted up "
                       "to the console's cap")),
      capped_(gauge_family(*registry_, "tributary_group_events_behind_capped",
                           "1 when events_behind stopped at the console's cap: the group is at least that far behind")),
      oldest_age_(
          gauge_family(*registry_, "tributary_group_oldest_unprocessed_age_seconds",
                       "Age (since loaded_at) of the oldest event the group has not acknowledged: behind, in flight "
                       "or waiting for a retry, dead letters excluded (0: none)")),
      in_flight_(gauge_family(*registry_, "tributary_group_batches_in_flight",
                              "Batches leased to the group's consumers and not yet acknowledged")),
      retries_(gauge_family(*registry_, "tributary_group_retries_waiting",
                            "Events given back (failed or expired lease) waiting for another delivery")),
      dead_letters_(gauge_family(*registry_, "tributary_group_dead_letters",
                                 "Events the group gave up on after max_deliveries (replay them from the console)")),
      lanes_(gauge_family(*registry_, "tributary_group_lanes",
                          "The group's lanes (1: a group without lanes; group create --lanes)")),
      unheld_lanes_(gauge_family(*registry_, "tributary_group_unheld_lanes",
                                 "Lanes of the group that no consumer holds: their events wait (alert on > 0 while "
                                 "consumers run)")),
      lane_behind_(gauge_family(*registry_, "tributary_group_lane_events_behind",
                                "Events of a lane's sources not yet handed out to the group, counted up to the "
                                "console's cap")),
      lane_capped_(gauge_family(*registry_, "tributary_group_lane_events_behind_capped",
                                "1 when a lane's events_behind is a lower bound (the cap, or the count stopped "
                                "8 partitions after the lane's cursor)")),
      lane_oldest_age_(gauge_family(*registry_, "tributary_group_lane_oldest_unprocessed_age_seconds",
                                    "Age of the oldest event of a lane the group has not acknowledged (0: none)")),
      lane_held_(gauge_family(*registry_, "tributary_group_lane_held",
                              "1 when a consumer holds the lane, 0 when nobody does (its events wait)")),
      database_up_(gauge_family(*registry_, "tributary_console_database_up",
                                "1 when the console's last read of the groups worked")
                       .Add({})),
      last_read_(gauge_family(*registry_, "tributary_console_groups_read_timestamp_seconds",
                              "Unix time of the last read of the groups that worked (the group series are as of it)")
                     .Add({})) {
    gauge_family(*registry_, "tributary_build_info", "Build information (always 1)").Add({{"version", version}}).Set(1);
}

GroupMetrics::~GroupMetrics() = default;

void GroupMetrics::read(const std::vector<GroupFigures>& groups, double unix_time) {
    std::lock_guard<std::mutex> guard(mutex_);
    std::set<std::string> present;
    for (const auto& g : groups) {
        present.insert(g.name);
        auto& per = groups_[g.name];
        if (!per) {
            const prometheus::Labels labels = {{"group", g.name}};
            per = std::make_unique<PerGroup>(PerGroup{&events_behind_.Add(labels),
                                                      &capped_.Add(labels),
                                                      &oldest_age_.Add(labels),
                                                      &in_flight_.Add(labels),
                                                      &retries_.Add(labels),
                                                      &dead_letters_.Add(labels),
                                                      &lanes_.Add(labels),
                                                      &unheld_lanes_.Add(labels),
                                                      {}});
        }
        per->events_behind->Set(static_cast<double>(g.events_behind));
        per->capped->Set(g.events_behind_capped ? 1 : 0);
        per->oldest_age->Set(g.oldest_unprocessed_age_seconds);
        per->in_flight->Set(static_cast<double>(g.batches_in_flight));
        per->retries->Set(static_cast<double>(g.retries_waiting));
        per->dead_letters->Set(static_cast<double>(g.dead_letters));
        per->lanes->Set(g.lanes);
        per->unheld_lanes->Set(g.unheld_lanes);
        read_lanes(g.name, g, *per);
    }
    for (auto it = groups_.begin(); it != groups_.end();) {
        if (present.count(it->first)) {
            ++it;
            continue;
        }
        // A group deleted since the last read: no stale series.
        events_behind_.Remove(it->second->events_behind);
        capped_.Remove(it->second->capped);
        oldest_age_.Remove(it->second->oldest_age);
        in_flight_.Remove(it->second->in_flight);
        retries_.Remove(it->second->retries);
        dead_letters_.Remove(it->second->dead_letters);
        lanes_.Remove(it->second->lanes);
        unheld_lanes_.Remove(it->second->unheld_lanes);
        for (auto& [lane, series] : it->second->lane_series) remove_lane(series);
        it = groups_.erase(it);
    }
    database_up_.Set(1);
    last_read_.Set(unix_time);
}

// A series per lane, as Kafka's lag exporters give one per partition; the
// lanes a group no longer has (deleted and made again with fewer) leave none.
void GroupMetrics::read_lanes(const std::string& group, const GroupFigures& figures, PerGroup& per) {
    std::set<int> present;
    for (const auto& l : figures.lane_figures) {
        present.insert(l.lane);
        auto [it, added] = per.lane_series.try_emplace(l.lane);
        if (added) {
            const prometheus::Labels labels = {{"group", group}, {"lane", std::to_string(l.lane)}};
            it->second = PerLane{&lane_behind_.Add(labels), &lane_capped_.Add(labels), &lane_oldest_age_.Add(labels),
                                 &lane_held_.Add(labels)};
        }
        it->second.events_behind->Set(static_cast<double>(l.events_behind));
        it->second.capped->Set(l.events_behind_capped ? 1 : 0);
        it->second.oldest_age->Set(l.oldest_unprocessed_age_seconds);
        it->second.held->Set(l.held ? 1 : 0);
    }
    for (auto it = per.lane_series.begin(); it != per.lane_series.end();) {
        if (present.count(it->first)) {
            ++it;
            continue;
        }
        remove_lane(it->second);
        it = per.lane_series.erase(it);
    }
}

void GroupMetrics::remove_lane(PerLane& lane) {
    lane_behind_.Remove(lane.events_behind);
    lane_capped_.Remove(lane.capped);
    lane_oldest_age_.Remove(lane.oldest_age);
    lane_held_.Remove(lane.held);
}

void GroupMetrics::read_failed() {
    std::lock_guard<std::mutex> guard(mutex_);
    database_up_.Set(0);
}

std::string GroupMetrics::scrape() {
    std::lock_guard<std::mutex> guard(mutex_);
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry_->Collect());
    return out.str();
}

}  // namespace tributary::metrics
