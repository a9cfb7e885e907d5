#include "log_metrics.h"

#include <set>
#include <sstream>

#include <prometheus/text_serializer.h>

#include "gauge_family.h"

namespace tributary::metrics {

LogMetrics::LogMetrics(std::string holder)
    : holder_(std::move(holder)),
      registry_(std::make_shared<prometheus::Registry>()),
      bytes_(gauge_family(*registry_, "tributary_log_bytes",
                          "Bytes on disk of the log's partitions (default included; indexes and TOAST included)")),
      partitions_(gauge_family(*registry_, "tributary_log_partitions",
                               "Partitions of the log, those created ahead included (not the default partition)")),
      oldest_event_age_(gauge_family(*registry_, "tributary_log_oldest_event_age_seconds",
                                     "Age of the oldest event kept (loaded_at); no series while the log is empty")),
      default_events_(gauge_family(*registry_, "tributary_log_default_partition_events",
                                   "Events in the default partition, counted up to 1000 (should be 0)")),
      ahead_(gauge_family(*registry_, "tributary_log_ahead_seconds",
                          "How long the partitions created ahead last at the measured rate of transaction ids")),
      next_drop_(gauge_family(*registry_, "tributary_log_next_drop_seconds",
                              "Seconds until retention drops the next partition (0: due now); no series when none")),
      archive_failing_(gauge_family(*registry_, "tributary_log_archive_failing_partitions",
                                    "Partitions whose last archive attempt failed")),
      held_(gauge_family(*registry_, "tributary_log_retention_held_partitions",
                         "Partitions retention would drop that a consumer group still needs")),
      oldest_transaction_age_(
          gauge_family(*registry_, "tributary_oldest_transaction_age_seconds",
                       "Age of the oldest open transaction in the cluster this role may see (0: none); it holds back "
                       "every consumer group and vacuum")),
      xmin_lag_(gauge_family(*registry_, "tributary_xmin_horizon_lag_xids",
                             "Transaction ids between the cluster's xmin horizon and the counter")),
      is_leader_(gauge_family(*registry_, "tributary_maintainer_is_leader",
                              "1 while this process holds the maintainer's lease")) {}

void LogMetrics::set_known(prometheus::Family<prometheus::Gauge>& family, const std::optional<double>& value) {
    if (value) family.Add({}).Set(*value);
    else if (family.Has({})) family.Remove(&family.Add({}));
}

void LogMetrics::update(const LogStatus& s) {
    std::lock_guard<std::mutex> guard(mutex_);
    set_known(bytes_, static_cast<double>(s.bytes));
    set_known(partitions_, s.partitions);
    set_known(oldest_event_age_, s.oldest_event_age_seconds);
    set_known(default_events_, static_cast<double>(s.default_events));
    set_known(ahead_, s.ahead_seconds);
    set_known(next_drop_, s.next_drop_partition ? s.next_drop_seconds : std::nullopt);
    set_known(archive_failing_, s.archive_failing);
    std::set<std::string> holding;
    for (const auto& h : s.held) {
        holding.insert(h.group);
        auto& gauge = held_by_group_[h.group];
        if (!gauge) gauge = &held_.Add({{"group", h.group}});
        gauge->Set(static_cast<double>(h.partitions));
    }
    for (auto it = held_by_group_.begin(); it != held_by_group_.end();) {
        if (holding.count(it->first)) {
            ++it;
            continue;
        }
        held_.Remove(it->second);  // a group that lets go (or is gone) leaves no stale series
        it = held_by_group_.erase(it);
    }
    set_known(oldest_transaction_age_, s.oldest_xact_age_seconds.value_or(0));  // known: 0 is none open
    set_known(xmin_lag_, s.xmin_lag_xids);
    set_known(is_leader_, !holder_.empty() && s.has_maintainer() && s.maintainer_holder == holder_ ? 1 : 0);
}

std::string LogMetrics::scrape() {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry_->Collect());
    return out.str();
}

}  // namespace tributary::metrics
