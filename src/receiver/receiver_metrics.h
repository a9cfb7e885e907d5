#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "metrics/health.h"
#include "webhook/webhook_receiver.h"

namespace tributary::receiver {

/// `tributary receive`'s Prometheus metrics, and what /healthz says of it.
/// Thread-safe: every connection's thread and the committer report here.
/// Sources are labelled by name only when the catalogue knows them (an
/// unknown name is "", so strangers cannot grow the label set).
class ReceiverMetrics : public webhook::ReceiverObserver {
public:
    explicit ReceiverMetrics(const std::string& version);

    void answered(const std::string& source, int status, std::size_t stored) override;
    void committed(std::size_t requests, std::size_t events) override;
    /// Requests waiting for their answer (the HTTP server's connections in
    /// handle(): queued for, or in, a group commit).
    void in_flight(int change);

    /// /healthz: healthy while the process serves. An unreachable database
    /// is not a reason to restart a receiver (it answers 503 and recovers by
    /// itself); rates of 503 are in the metrics.
    metrics::Health health() const { return {}; }
    std::string scrape();

private:
    std::shared_ptr<prometheus::Registry> registry_;
    std::mutex mutex_;
    std::map<std::pair<std::string, int>, prometheus::Counter*> requests_by_status_;
    std::map<std::string, prometheus::Counter*> stored_by_source_;

    prometheus::Family<prometheus::Counter>& requests_;
    prometheus::Family<prometheus::Counter>& events_stored_;
    prometheus::Counter& commits_;
    prometheus::Counter& committed_requests_;
    prometheus::Counter& committed_events_;
    prometheus::Histogram& requests_per_commit_;
    prometheus::Histogram& events_per_commit_;
    prometheus::Gauge& in_flight_;
};

}  // namespace tributary::receiver
