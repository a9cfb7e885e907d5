#include "group_metrics.h"

#include <set>
#include <sstream>

#include <prometheus/text_serializer.h>

#include "gauge_family.h"

namespace tributary::metrics {

struct GroupMetrics::PerGroup {
    prometheus::Gauge* events_behind = nullptr;
    prometheus::Gauge* capped = nullptr;
    prometheus::Gauge* oldest_age = nullptr;
    prometheus::Gauge* in_flight = nullptr;
    prometheus::Gauge* retries = nullptr;
    prometheus::Gauge* dead_letters = nullptr;
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
            per = std::make_unique<PerGroup>(PerGroup{&events_behind_.Add(labels), &capped_.Add(labels),
                                                      &oldest_age_.Add(labels), &in_flight_.Add(labels),
                                                      &retries_.Add(labels), &dead_letters_.Add(labels)});
        }
        per->events_behind->Set(static_cast<double>(g.events_behind));
        per->capped->Set(g.events_behind_capped ? 1 : 0);
        per->oldest_age->Set(g.oldest_unprocessed_age_seconds);
        per->in_flight->Set(static_cast<double>(g.batches_in_flight));
        per->retries->Set(static_cast<double>(g.retries_waiting));
        per->dead_letters->Set(static_cast<double>(g.dead_letters));
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
        it = groups_.erase(it);
    }
    database_up_.Set(1);
    last_read_.Set(unix_time);
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
