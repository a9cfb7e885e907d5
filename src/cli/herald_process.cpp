#include "herald_process.h"

#include <spdlog/spdlog.h>

#include "duration.h"
#include "flag_checks.h"
#include "maintenance/announce_step.h"
#include "maintenance/holder_name.h"
#include "postgres/postgres_lease_store.h"
#include "postgres/postgres_log_announcer.h"
#include "postgres/postgres_session.h"
#include "role_competition.h"
#include "usage_error.h"

namespace tributary::cli {

maintenance::ElectionTimings HeraldFlags::timings() const {
    maintenance::ElectionTimings timings;
    timings.lease = parse_duration(lease);
    timings.interval = parse_duration(interval);
    // Renewed every third of the lease: below a second, one slow round trip would cost it.
    if (timings.lease < std::chrono::seconds(1))
        throw UsageError("--herald-lease '" + lease + "': the herald's lease must be at least 1s, e.g. 2s");
    if (timings.interval.count() <= 0 || timings.interval > timings.lease / 3)
        throw UsageError("--herald-interval '" + interval +
                         "': must be more than 0 and at most a third of "
                         "--herald-lease, e.g. 10ms");
    return timings;
}

void add_herald_flags(CLI::App& cmd, HeraldFlags& flags) {
    cmd.add_option("--herald-interval", flags.interval,
                   "how often the herald, while this process holds its lease, looks whether events became "
                   "readable and wakes the consumers (one NOTIFY tributary_events at most per interval)")
        ->capture_default_str()
        ->check(duration_value());
    cmd.add_option("--herald-lease", flags.lease,
                   "how long the herald's lease lasts unrenewed (renewed every third of it): how long "
                   "consumers go without wake-ups, on their fallback timers, after a herald vanished")
        ->capture_default_str()
        ->check(duration_value());
    cmd.add_flag("--no-herald", flags.off, "take no part in the herald's election");
}

namespace {

/// A herald wired to PostgreSQL: its own session, the herald's lease, one step.
class HeraldProcess {
public:
    HeraldProcess(const std::string& db, const maintenance::ElectionTimings& timings, const std::string& holder)
        : session_(db),
          store_(session_, postgres::Lease::herald),
          announcer_(session_),
          step_(announcer_),
          role_("herald", store_, {&step_}, holder, timings) {}

    maintenance::ElectedRole& role() { return role_; }

private:
    postgres::PostgresSession session_;
    postgres::PostgresLeaseStore store_;
    postgres::PostgresLogAnnouncer announcer_;
    maintenance::AnnounceStep step_;
    maintenance::ElectedRole role_;
};

void take_part_in_heralding(const std::string& db, const maintenance::ElectionTimings& timings,
                            const StopSignal& stop) {
    const auto holder = maintenance::unique_holder_name();  // one name for every attempt
    compete_until_stopped(
        "herald", timings.lease, stop,
        [&] {
            HeraldProcess process(db, timings, holder);
            process.role().run(stop);
        },
        [](const std::exception& e) {
            spdlog::warn(
                "herald: this process takes no part in waking consumers (its work goes on; another process "
                "may herald): {} (the herald's functions need one of the roles tributary_loader, "
                "tributary_receiver, tributary_maintainer or tributary_consumer)",
                e.what());
        });
}

}  // namespace

HeraldThread::HeraldThread(const std::string& db, const HeraldFlags& flags, StopSignal& stop) {
    if (flags.off) return;
    const auto timings = flags.timings();
    stop.on_stop([own = stop_] { own->request_stop(); });
    thread_.emplace([db, timings, own = stop_] { take_part_in_heralding(db, timings, *own); });
}

HeraldThread::~HeraldThread() {
    stop_->request_stop();
    if (thread_) thread_->join();
}

}  // namespace tributary::cli
