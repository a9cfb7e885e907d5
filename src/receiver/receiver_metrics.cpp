#include "receiver_metrics.h"

#include <sstream>

#include <prometheus/text_serializer.h>

namespace tributary::receiver {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

/// Group sizes: one request alone up to the committer's largest group.
prometheus::Histogram::BucketBoundaries group_buckets() { return {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}; }

}  // namespace

ReceiverMetrics::ReceiverMetrics(const std::string& version)
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(BuildCounter()
                    .Name("tributary_receiver_requests_total")
                    .Help("Webhook requests answered, by source (\"\" when unknown) and HTTP status")
                    .Register(*registry_)),
      events_stored_(BuildCounter()
                         .Name("tributary_receiver_events_stored_total")
                         .Help("Pushed events committed (repeats of stored keys not counted)")
                         .Register(*registry_)),
      commits_(BuildCounter()
                   .Name("tributary_receiver_group_commits_total")
                   .Help("Group commits: transactions storing every request waiting at that moment")
                   .Register(*registry_)
                   .Add({})),
      committed_requests_(BuildCounter()
                              .Name("tributary_receiver_committed_requests_total")
                              .Help("Requests carried by group commits")
                              .Register(*registry_)
                              .Add({})),
      committed_events_(BuildCounter()
                            .Name("tributary_receiver_committed_events_total")
                            .Help("Events carried by group commits (stored or repeats)")
                            .Register(*registry_)
                            .Add({})),
      requests_per_commit_(BuildHistogram()
                               .Name("tributary_receiver_requests_per_commit")
                               .Help("Requests carried by one group commit")
                               .Register(*registry_)
                               .Add({}, group_buckets())),
      events_per_commit_(BuildHistogram()
                             .Name("tributary_receiver_events_per_commit")
                             .Help("Events carried by one group commit")
                             .Register(*registry_)
                             .Add({}, group_buckets())),
      in_flight_(BuildGauge()
                     .Name("tributary_receiver_requests_in_flight")
                     .Help("Requests whole and waiting for their answer: queued for, or in, a group commit")
                     .Register(*registry_)
                     .Add({})) {
    BuildGauge()
        .Name("tributary_build_info")
        .Help("Always 1; the version is a label")
        .Register(*registry_)
        .Add({{"version", version}})
        .Set(1);
}

void ReceiverMetrics::answered(const std::string& source, int status, std::size_t stored) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& requests = requests_by_status_[{source, status}];
    if (!requests) requests = &requests_.Add({{"source", source}, {"status", std::to_string(status)}});
    requests->Increment();
    if (stored) {
        auto& events = stored_by_source_[source];
        if (!events) events = &events_stored_.Add({{"source", source}});
        events->Increment(static_cast<double>(stored));
    }
}

void ReceiverMetrics::committed(std::size_t requests, std::size_t events) {
    commits_.Increment();
    committed_requests_.Increment(static_cast<double>(requests));
    committed_events_.Increment(static_cast<double>(events));
    requests_per_commit_.Observe(static_cast<double>(requests));
    events_per_commit_.Observe(static_cast<double>(events));
}

void ReceiverMetrics::in_flight(int change) { in_flight_.Increment(change); }

std::string ReceiverMetrics::scrape() {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry_->Collect());
    return out.str();
}

}  // namespace tributary::receiver
