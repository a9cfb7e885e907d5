#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "batch_handler.h"
#include "group_log.h"
#include "heartbeat.h"
#include "idle_pause.h"
#include "outage_log.h"
#include "stop_signal.h"
#include "wakeup.h"

namespace tributary {

struct ConsumerOptions {
    std::string group;
    std::string consumer;  ///< recorded with each lease, e.g. "host:pid"
    int batch_size = 1000;
    /// Workers, each with one batch in hand at most: the bound on work in
    /// progress (backpressure: nothing is read while all hold a batch).
    int concurrency = 1;
    /// The group's lease; heartbeats extend it every lease / 3.
    std::chrono::milliseconds lease{30000};
    /// After a stop, how long batches in hand may still take.
    std::chrono::milliseconds shutdown_timeout{30000};
    /// End each worker at its first read that finds nothing to do, and to
    /// which no lane is coming (GroupLog::awaits_lanes).
    bool until_idle = false;
    /// The pause after an empty read, doubling while reads stay empty.
    std::chrono::milliseconds idle_min{50};
    std::chrono::milliseconds idle_max{1000};
    /// The pause after a failed read or ack, doubling while it keeps failing.
    std::chrono::milliseconds outage_min{500};
    std::chrono::milliseconds outage_max{10000};
    std::chrono::seconds progress_every{10};
};

/// What a consumer did, for its last log line and for tests.
struct ConsumerTotals {
    std::uint64_t batches_acked = 0, events_acked = 0;
    std::uint64_t batches_failed = 0;     ///< the handler failed; the group retries them
    std::uint64_t batches_lost = 0;       ///< ack/fail refused: the lease had gone to another consumer
    std::uint64_t batches_abandoned = 0;  ///< still running at the shutdown timeout
    std::uint64_t batches_unsettled = 0;  ///< ack/fail impossible before the lease ended (database away)
};

/// Reads a consumer group's batches and hands each to the handler, with
/// `concurrency` workers (one database session each) and a heartbeat that
/// keeps the leases of the batches in hand. At-least-once: a batch is acked
/// only after its handler succeeded; whatever is not acked comes back
/// (failed: as retries; lost, abandoned or unsettled: after its lease).
///
/// One round trip per batch: a batch handled well is acked by the call that
/// leases the next (GroupLog::next); a failed one is failed on its own and
/// the next call carries no ack. An ack still pending when a worker stops
/// reading (a stop, the end of --until-idle, an error) is sent on its own.
///
/// A stop ends reading at once; batches in hand may finish and are then
/// acked, for up to `shutdown_timeout`; the handlers still running then are
/// abandoned. A database outage is logged once and retried.
class Consumer {
public:
    struct Ports {
        GroupLogOpener open_log;  ///< one log per worker, one for the heartbeat
        BatchHandler& handler;
        Wakeup& wakeup;
    };

    Consumer(Ports ports, ConsumerOptions options, StopSignal& stop);

    /// Consumes until stopped (or idle, with `until_idle`). Returns false when
    /// it ended on an error that retrying cannot fix (the group is gone).
    bool run();

    ConsumerTotals totals() const;

private:
    struct Counters {
        std::atomic<std::uint64_t> batches_acked{0}, events_acked{0}, batches_failed{0}, batches_lost{0},
            batches_abandoned{0}, batches_unsettled{0};
    };

    /// A batch its handler finished well, whose ack rides on the next read.
    struct PendingAck {
        LeasedBatch batch;
        Heartbeat::Ticket lease;  ///< extended until the ack is settled
        /// A call that carried the ack threw: it may have acked the batch.
        bool earlier_try_failed = false;
    };

    void work(Heartbeat& heartbeat, OutageLog& outages);
    /// Says the consumer stops (GroupLog::leave), so that the lanes it held
    /// go to the others at once.
    void give_back_lanes();
    /// With --until-idle, after a read that found nothing: whether to read
    /// again rather than stop, because lanes are coming to this consumer
    /// (GroupLog::awaits_lanes).
    bool lanes_coming(GroupLog& log);
    NextBatch next(GroupLog& log, std::optional<PendingAck>& pending);
    void pause_after_error(IdlePause& outage, std::optional<PendingAck>& pending);
    std::optional<PendingAck> process(GroupLog& log, Heartbeat& heartbeat, OutageLog& outages, LeasedBatch batch,
                                      std::chrono::steady_clock::time_point read_started);
    HandlerResult run_handler(const LeasedBatch& batch);
    void settle(GroupLog& log, OutageLog& outages, const LeasedBatch& batch, const HandlerResult& result,
                const Heartbeat::Ticket& lease, bool earlier_try_failed = false);
    bool accepted(bool answer, bool earlier_try_failed, const LeasedBatch& batch, const Heartbeat::Ticket& lease);
    void count(const LeasedBatch& batch, const HandlerResult& result, bool settled);
    void wait_for_workers(std::atomic<int>& running, const StopSignal& settled);
    void report_progress(std::uint64_t& events_seen, std::chrono::steady_clock::time_point& last);

    Ports ports_;
    const ConsumerOptions options_;
    const std::string context_;  ///< "group=... consumer=..." for every log line
    StopSignal& stop_;
    StopSignal abandon_;  ///< the shutdown timeout is over: give up on batches in hand
    std::atomic<bool> fatal_{false};
    Counters counters_;
};

}  // namespace tributary
