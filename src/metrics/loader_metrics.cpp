#include "loader_metrics.h"

#include <optional>
#include <sstream>

#include <prometheus/text_serializer.h>

#include "core/loader.h"

namespace tributary::metrics {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// From a fast local fetch (ms) to a source at its timeout (10 s and more).
const prometheus::Histogram::BucketBoundaries kDurationBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                  0.25,  0.5,    1,     2.5,  5,     10,   30};

const FailureClass kFailureClasses[] = {FailureClass::network, FailureClass::http_status, FailureClass::invalid_batch,
                                        FailureClass::store};

double unix_seconds(std::chrono::system_clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

struct LoaderMetrics::PerSource {
    prometheus::Counter* events = nullptr;
    prometheus::Counter* batches = nullptr;
    std::map<FailureClass, prometheus::Counter*> errors;
    prometheus::Counter* lock_skips = nullptr;
    prometheus::Counter* gate_skips = nullptr;
    prometheus::Histogram* fetch_duration = nullptr;
    prometheus::Histogram* append_duration = nullptr;
    prometheus::Gauge* cursor = nullptr;
    prometheus::Gauge* lag = nullptr;
    prometheus::Gauge* failing = nullptr;
    prometheus::Gauge* last_success = nullptr;
    prometheus::Gauge* since_success = nullptr;
    prometheus::Gauge* locked_by_stranger = nullptr;  ///< from the first time it was looked into
    std::map<StoreConflict, prometheus::Counter*> conflicts;
    std::optional<std::chrono::system_clock::time_point> succeeded_at;
};

LoaderMetrics::LoaderMetrics(int workers, const std::string& version)
    : registry_(std::make_shared<prometheus::Registry>()),
      events_stored_(BuildCounter()
                         .Name("tributary_events_stored_total")
                         .Help("Events committed to PostgreSQL")
                         .Register(*registry_)),
      batches_stored_(BuildCounter()
                          .Name("tributary_batches_stored_total")
                          .Help("Batches committed to PostgreSQL")
                          .Register(*registry_)),
      fetch_errors_(BuildCounter()
                        .Name("tributary_fetch_errors_total")
                        .Help("Failed source turns by class: network, http_status, invalid_batch, store")
                        .Register(*registry_)),
      lock_skips_(BuildCounter()
                      .Name("tributary_lock_skips_total")
                      .Help("Turns skipped: another worker held the source")
                      .Register(*registry_)),
      gate_skips_(BuildCounter()
                      .Name("tributary_gate_skips_total")
                      .Help("Turns skipped: the source was not due (interval or backoff)")
                      .Register(*registry_)),
      fetch_duration_(BuildHistogram()
                          .Name("tributary_fetch_duration_seconds")
                          .Help("Time of one request to a source")
                          .Register(*registry_)),
      append_duration_(BuildHistogram()
                           .Name("tributary_append_duration_seconds")
                           .Help("Time to store one batch (transaction included)")
                           .Register(*registry_)),
      cursor_(BuildGauge().Name("tributary_source_cursor").Help("Id of the last event stored").Register(*registry_)),
      lag_(BuildGauge()
               .Name("tributary_source_lag_events")
               .Help("Events the source still holds, as it reported")
               .Register(*registry_)),
      failing_(BuildGauge()
                   .Name("tributary_source_failing")
                   .Help("1 while the source's last request failed")
                   .Register(*registry_)),
      last_success_(BuildGauge()
                        .Name("tributary_source_last_success_timestamp_seconds")
                        .Help("Unix time of the last successful fetch by this process")
                        .Register(*registry_)),
      since_success_(BuildGauge()
                         .Name("tributary_source_seconds_since_last_success")
                         .Help("Seconds since the last successful fetch by this process")
                         .Register(*registry_)),
      locked_by_stranger_(BuildGauge()
                              .Name("tributary_source_locked_by_stranger")
                              .Help("1 while the source's lock is held by a session that is not a loader in a turn")
                              .Register(*registry_)),
      store_conflicts_(BuildCounter()
                           .Name("tributary_store_conflicts_total")
                           .Help("Batches not stored although the source was this worker's: reason = cursor_moved "
                                 "(compare-and-set) or duplicate_ids (unique key); near zero when healthy")
                           .Register(*registry_)),
      passes_(BuildCounter()
                  .Name("tributary_passes_total")
                  .Help("Passes over the enabled sources")
                  .Register(*registry_)
                  .Add({})),
      idle_sleeps_(BuildCounter()
                       .Name("tributary_idle_sleeps_total")
                       .Help("Pauses after a pass that stored nothing")
                       .Register(*registry_)
                       .Add({})),
      reconnects_(BuildCounter()
                      .Name("tributary_database_reconnects_total")
                      .Help("New database sessions after a lost one")
                      .Register(*registry_)
                      .Add({})),
      database_up_(BuildGauge()
                       .Name("tributary_database_up")
                       .Help("1 while every worker reaches the database")
                       .Register(*registry_)
                       .Add({})) {
    BuildGauge()
        .Name("tributary_workers")
        .Help("Loader workers in this process")
        .Register(*registry_)
        .Add({})
        .Set(workers);
    BuildGauge()
        .Name("tributary_build_info")
        .Help("Build information (always 1)")
        .Register(*registry_)
        .Add({{"version", version}})
        .Set(1);
    database_up_.Set(1);
}

LoaderMetrics::~LoaderMetrics() = default;

LoaderMetrics::PerSource& LoaderMetrics::per_source(const std::string& name) {
    auto& slot = sources_[name];
    if (slot) return *slot;
    slot = std::make_unique<PerSource>();
    const prometheus::Labels labels{{"source", name}};
    slot->events = &events_stored_.Add(labels);
    slot->batches = &batches_stored_.Add(labels);
    for (const auto c : kFailureClasses)
        slot->errors[c] = &fetch_errors_.Add({{"source", name}, {"class", to_string(c)}});
    for (const auto c : {StoreConflict::cursor_moved, StoreConflict::duplicate_ids})
        slot->conflicts[c] = &store_conflicts_.Add({{"source", name}, {"reason", to_string(c)}});
    slot->lock_skips = &lock_skips_.Add(labels);
    slot->gate_skips = &gate_skips_.Add(labels);
    slot->fetch_duration = &fetch_duration_.Add(labels, kDurationBuckets);
    slot->append_duration = &append_duration_.Add(labels, kDurationBuckets);
    slot->cursor = &cursor_.Add(labels);
    slot->failing = &failing_.Add(labels);
    slot->last_success = &last_success_.Add(labels);
    slot->since_success = &since_success_.Add(labels);
    return *slot;
}

void LoaderMetrics::turn_done(const Source& source, const TurnReport& turn) {
    std::lock_guard<std::mutex> guard(mutex_);
    PerSource& m = per_source(source.name);
    switch (turn.outcome) {
        case SourceOutcome::locked: m.lock_skips->Increment(); break;
        case SourceOutcome::not_due:
        case SourceOutcome::backing_off: m.gate_skips->Increment(); break;
        case SourceOutcome::stored:
            m.events->Increment(static_cast<double>(turn.events));
            m.batches->Increment();
            break;
        default: break;
    }
    if (turn.failure != FailureClass::none) m.errors[turn.failure]->Increment();
    if (turn.store_conflict != StoreConflict::none) m.conflicts[turn.store_conflict]->Increment();
    if (turn.fetch_time) {
        m.fetch_duration->Observe(turn.fetch_time->count());
        const bool failed = turn.outcome == SourceOutcome::failed;
        m.failing->Set(failed ? 1 : 0);
        if (!failed) {
            m.succeeded_at = std::chrono::system_clock::now();
            m.last_success->Set(unix_seconds(*m.succeeded_at));
        }
    }
    if (turn.append_time) m.append_duration->Observe(turn.append_time->count());
    if (turn.cursor) m.cursor->Set(static_cast<double>(*turn.cursor));
    if (turn.backlog) {
        // Only sources that report their backlog get the series: a 0 for
        // "unknown" would read as "caught up".
        if (!m.lag) m.lag = &lag_.Add({{"source", source.name}});
        m.lag->Set(static_cast<double>(*turn.backlog));
    }
}

void LoaderMetrics::lock_stranger(const Source& source, const std::optional<LockHolder>& holder) {
    std::lock_guard<std::mutex> guard(mutex_);
    PerSource& m = per_source(source.name);
    if (!m.locked_by_stranger) m.locked_by_stranger = &locked_by_stranger_.Add({{"source", source.name}});
    m.locked_by_stranger->Set(holder ? 1 : 0);
}

void LoaderMetrics::pass_done(const PassSummary&) { passes_.Increment(); }

void LoaderMetrics::idle_sleep(std::chrono::milliseconds) { idle_sleeps_.Increment(); }

void LoaderMetrics::database_changed(bool reachable, const std::string&) { database_up_.Set(reachable ? 1 : 0); }

void LoaderMetrics::database_reconnected() { reconnects_.Increment(); }

std::string LoaderMetrics::scrape() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        const auto now = std::chrono::system_clock::now();
        for (auto& [name, m] : sources_)
            if (m->succeeded_at) m->since_success->Set(std::chrono::duration<double>(now - *m->succeeded_at).count());
    }
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry_->Collect());
    return out.str();
}

}  // namespace tributary::metrics
