#include "consumer.h"

#include <memory>

#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "errors.h"
#include "idle_pause.h"
#include "refused_settlement.h"
#include "stale_session.h"

namespace tributary {

namespace {

using steady = std::chrono::steady_clock;

/// How often the supervising thread looks at the workers during a shutdown.
constexpr std::chrono::milliseconds kShutdownTick{10};

/// A handler's error (often a command's stderr) on one log line, ending
/// with its last words, which usually say most.
std::string one_line(const std::string& text) {
    constexpr std::size_t kLongest = 500;
    std::string out;
    for (const char ch : text) out += ch == '\n' ? std::string(" | ") : std::string(1, ch);
    while (out.size() >= 3 && out.compare(out.size() - 3, 3, " | ") == 0) out.resize(out.size() - 3);
    return out.size() <= kLongest ? out : "..." + out.substr(out.size() - kLongest);
}

}  // namespace

Consumer::Consumer(Ports ports, ConsumerOptions options, StopSignal& stop)
    : ports_(std::move(ports)),
      options_(std::move(options)),
      context_("group=" + options_.group + " consumer=" + options_.consumer),
      stop_(stop) {}

ConsumerTotals Consumer::totals() const {
    ConsumerTotals t;
    t.batches_acked = counters_.batches_acked;
    t.events_acked = counters_.events_acked;
    t.batches_failed = counters_.batches_failed;
    t.batches_lost = counters_.batches_lost;
    t.batches_abandoned = counters_.batches_abandoned;
    t.batches_unsettled = counters_.batches_unsettled;
    return t;
}

bool Consumer::run() {
    OutageLog outages(context_);
    Heartbeat heartbeat(ports_.open_log(), options_.lease, context_, outages);
    spdlog::info("{} consuming with {} worker(s), batches of up to {} events, lease {} ms{}", context_,
                 options_.concurrency, options_.batch_size, options_.lease.count(),
                 options_.until_idle ? ", until idle" : "");
    std::atomic<int> running{options_.concurrency};
    // Wakes the supervisor when the last worker ends or a stop comes, so an
    // idle consumer has no timer of its own (shared: the stop hook may run
    // after this returns).
    auto settled = std::make_shared<StopSignal>();
    stop_.on_stop([settled] { settled->request_stop(); });
    std::vector<std::thread> workers;
    for (int i = 0; i < options_.concurrency; ++i)
        workers.emplace_back([&] {
            work(heartbeat, outages);
            if (--running == 0) settled->request_stop();
        });
    wait_for_workers(running, *settled);
    for (auto& w : workers) w.join();
    give_back_lanes();

    const auto t = totals();
    spdlog::info(
        "{} stopped: {} batches acked ({} events), {} failed, {} lost to other consumers, {} abandoned, "
        "{} left to their lease",
        context_, t.batches_acked, t.events_acked, t.batches_failed, t.batches_lost, t.batches_abandoned,
        t.batches_unsettled);
    return !fatal_;
}

void Consumer::give_back_lanes() {
    if (fatal_) return;  // the group is gone
    try {
        const int lanes = ports_.open_log()->leave(options_.consumer);
        if (lanes > 0) spdlog::info("{} gave back its {} lane(s) to the group's other consumers", context_, lanes);
    } catch (const std::exception& e) {
        // Not worth a retry: they are the others' one lease after its last read anyway.
        spdlog::warn(
            "{} could not give back its lanes (the other consumers take them one lease after its last "
            "read): {}",
            context_, e.what());
    }
}

bool Consumer::lanes_coming(GroupLog& log) {
    try {
        if (!log.awaits_lanes(options_.consumer)) return false;
        spdlog::debug("{} found nothing, but lanes are coming to it from the group's other consumers", context_);
        return true;
    } catch (const DatabaseUnavailable& e) {
        // The next read waits for the database, as any read does.
        spdlog::warn("{} could not ask whether lanes are coming to it: {}", context_, e.what());
        return true;
    } catch (const std::exception& e) {
        spdlog::warn("{} could not ask whether lanes are coming to it, so stops as idle: {}", context_, e.what());
        return false;
    }
}

void Consumer::wait_for_workers(std::atomic<int>& running, const StopSignal& settled) {
    std::uint64_t events_seen = 0;
    auto last_report = steady::now();
    while (running > 0 && !stop_.stop_requested()) {
        settled.wait_for(options_.progress_every);
        report_progress(events_seen, last_report);
    }
    if (running == 0) return;
    // Stopped: no worker reads any more; those with a batch in hand finish it.
    const auto deadline = steady::now() + options_.shutdown_timeout;
    spdlog::info("{} stopping: no more reads; waiting up to {} ms for the batches in hand", context_,
                 options_.shutdown_timeout.count());
    while (running > 0 && steady::now() < deadline) std::this_thread::sleep_for(kShutdownTick);
    if (running == 0) return;
    spdlog::warn("{} shutdown timeout over: abandoning the batches still in hand; they come back after their lease",
                 context_);
    abandon_.request_stop();
}

void Consumer::report_progress(std::uint64_t& events_seen, steady::time_point& last) {
    const auto now = steady::now();
    if (now - last < options_.progress_every) return;
    const std::uint64_t acked = counters_.events_acked;
    if (acked > events_seen)
        spdlog::info("{} acked {} events in the last {} s", context_, acked - events_seen,
                     std::chrono::duration_cast<std::chrono::seconds>(now - last).count());
    events_seen = acked;
    last = now;
}

void Consumer::work(Heartbeat& heartbeat, OutageLog& outages) {
    std::unique_ptr<GroupLog> log;
    try {
        log = ports_.open_log();
    } catch (const std::exception& e) {
        spdlog::error("{} worker could not start: {}", context_, e.what());
        fatal_ = true;
        stop_.request_stop();
        return;
    }
    IdlePause idle(options_.idle_min, options_.idle_max);
    IdlePause outage(options_.outage_min, options_.outage_max);
    std::optional<PendingAck> pending;
    while (!stop_.stop_requested()) {
        const auto read_started = steady::now();
        NextBatch next;
        try {
            next = this->next(*log, pending);
            outages.up();
            outage.reset();
        } catch (const GroupNotFound& e) {
            spdlog::error("{} {}", context_, e.what());
            fatal_ = true;
            stop_.request_stop();
            break;
        } catch (const PermissionDenied& e) {
            // A grant revoked while consuming (`consume` checks the role at start): retrying grants nothing.
            spdlog::error("{} {}: this role no longer holds tributary_consumer's privileges", context_, e.what());
            fatal_ = true;
            stop_.request_stop();
            break;
        } catch (const DatabaseUnavailable& e) {
            outages.down(e.what());
            pause_after_error(outage, pending);
            continue;
        } catch (const std::exception& e) {
            spdlog::error("{} read failed, retrying: {}", context_, e.what());
            pause_after_error(outage, pending);
            continue;
        }
        if (pending) {
            count(pending->batch, HandlerResult::success(),
                  accepted(next.previous_acked.value_or(false), pending->earlier_try_failed, pending->batch,
                           pending->lease));
            pending.reset();
        }
        if (!next.batch) {
            if (options_.until_idle && !lanes_coming(*log)) break;
            ports_.wakeup.wait(idle.next());
            continue;
        }
        idle.reset();
        // emplace: a heartbeat ticket moves, but is never assigned.
        if (auto handled = process(*log, heartbeat, outages, std::move(*next.batch), read_started))
            pending.emplace(std::move(*handled));
    }
    // No more reads to carry it: the last ack goes on its own.
    if (pending)
        settle(*log, outages, pending->batch, HandlerResult::success(), pending->lease, pending->earlier_try_failed);
}

NextBatch Consumer::next(GroupLog& log, std::optional<PendingAck>& pending) {
    const LeasedBatch* previous = pending ? &pending->batch : nullptr;
    return retry_stale_session([&] {
        try {
            return log.next(options_.consumer, options_.batch_size, previous);
        } catch (const GroupNotFound&) {
            throw;  // the whole call was undone: nothing to doubt
        } catch (...) {
            // A try that failed may have acked the batch (a reply lost after
            // the commit, a reply the adapter could not read). Counting it
            // as a doubt is safe for tries that certainly did nothing too:
            // see judge_refusal.
            if (pending) pending->earlier_try_failed = true;
            throw;
        }
    });
}

void Consumer::pause_after_error(IdlePause& outage, std::optional<PendingAck>& pending) {
    const auto pause = outage.next();
    // As settle(): past its lease a batch is another consumer's to take
    // over, and our ack must not count anyway.
    if (pending && steady::now() + pause >= pending->lease.lease_ends()) {
        ++counters_.batches_unsettled;
        spdlog::error("{} batch={} could not ack before its lease ran out: it will be delivered again", context_,
                      pending->batch.id);
        pending.reset();
    }
    stop_.wait_for(pause);
}

std::optional<Consumer::PendingAck> Consumer::process(GroupLog& log, Heartbeat& heartbeat, OutageLog& outages,
                                                      LeasedBatch batch, steady::time_point read_started) {
    // Tracked until settled: an ack that waits for the database (or for the
    // next read) still holds the lease.
    auto lease = heartbeat.track(batch, read_started);
    spdlog::debug("{} batch={} delivery={} {} events, seq {}..{}", context_, batch.id, batch.delivery,
                  batch.events.size(), batch.events.empty() ? 0 : batch.events.front().seq,
                  batch.events.empty() ? 0 : batch.events.back().seq);
    const HandlerResult result = run_handler(batch);
    if (result.outcome == HandlerResult::Outcome::abandoned) {
        ++counters_.batches_abandoned;
        spdlog::warn("{} batch={} abandoned at the shutdown timeout; it comes back after its lease", context_,
                     batch.id);
        return std::nullopt;
    }
    if (lease.lost())
        spdlog::info("{} batch={} finished after its lease was lost; settling anyway (the database decides)", context_,
                     batch.id);
    if (result.outcome == HandlerResult::Outcome::success) return PendingAck{std::move(batch), std::move(lease)};
    settle(log, outages, batch, result, lease);
    return std::nullopt;
}

HandlerResult Consumer::run_handler(const LeasedBatch& batch) {
    try {
        return ports_.handler.handle(batch, abandon_);
    } catch (const std::exception& e) {
        // A handler bug fails the batch (it is retried) rather than the process.
        return HandlerResult::failure(std::string("handler error: ") + e.what());
    }
}

void Consumer::settle(GroupLog& log, OutageLog& outages, const LeasedBatch& batch, const HandlerResult& result,
                      const Heartbeat::Ticket& lease, bool earlier_try_failed) {
    const bool success = result.outcome == HandlerResult::Outcome::success;
    const char* verb = success ? "ack" : "fail";
    IdlePause backoff(options_.outage_min, options_.outage_max);
    for (;;) {
        try {
            const bool answer = retry_stale_session([&] {
                try {
                    return success ? log.ack(batch) : log.fail(batch, result.error);
                } catch (...) {
                    earlier_try_failed = true;
                    throw;
                }
            });
            outages.up();
            count(batch, result, accepted(answer, earlier_try_failed, batch, lease));
            return;
        } catch (const DatabaseUnavailable& e) {
            outages.down(e.what());
        } catch (const std::exception& e) {
            spdlog::warn("{} batch={} could not {}, retrying: {}", context_, batch.id, verb, e.what());
        }
        // Retry while the lease may still hold; past it the batch is another
        // consumer's to take over, and our result must not count anyway.
        const auto pause = backoff.next();
        if (steady::now() + pause >= lease.lease_ends()) {
            ++counters_.batches_unsettled;
            spdlog::error("{} batch={} could not {} before its lease ran out: it will be delivered again", context_,
                          batch.id, verb);
            return;
        }
        if (abandon_.wait_for(pause)) {
            ++counters_.batches_unsettled;
            spdlog::warn("{} batch={} could not {} before the shutdown timeout: it comes back after its lease",
                         context_, batch.id, verb);
            return;
        }
    }
}

bool Consumer::accepted(bool answer, bool earlier_try_failed, const LeasedBatch& batch,
                        const Heartbeat::Ticket& lease) {
    if (answer) return true;
    if (judge_refusal(earlier_try_failed, steady::now(), lease.lease_ends()) == Refusal::lost) return false;
    spdlog::info(
        "{} batch={} settlement refused after a try whose reply was lost; the lease still held, so that try "
        "settled it",
        context_, batch.id);
    return true;
}

void Consumer::count(const LeasedBatch& batch, const HandlerResult& result, bool settled) {
    const bool success = result.outcome == HandlerResult::Outcome::success;
    if (!settled) {
        ++counters_.batches_lost;
        spdlog::warn(
            "{} batch={} delivery={} {} refused: the lease went to another consumer (or an earlier try "
            "whose reply was lost settled it); this result does not count",
            context_, batch.id, batch.delivery, success ? "ack" : "fail");
        return;
    }
    if (success) {
        ++counters_.batches_acked;
        counters_.events_acked += batch.events.size();
        return;
    }
    ++counters_.batches_failed;
    spdlog::warn("{} batch={} delivery={} failed ({} events), will be retried: {}", context_, batch.id, batch.delivery,
                 batch.events.size(), one_line(result.error));
}

}  // namespace tributary
