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
    timings.interval = interval.empty() ? kInterval : parse_duration(interval);
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
                   "readable and wakes the consumers (one NOTIFY tributary_events at most per interval); "
                   "default 10ms, 50ms where the log is distributed over Citus")
        ->check(duration_value());
    cmd.add_option("--herald-lease", flags.lease,
                   "how long the herald's lease lasts unrenewed (renewed every third of it): how long "
                   "consumers go without wake-ups, on their fallback timers, after a herald vanished")
        ->capture_default_str()
        ->check(duration_value());
    cmd.add_flag("--no-herald", flags.off, "take no part in the herald's election");
}

namespace {

/// The herald's timings: the flags', with the default interval of the log's kind when
/// --herald-interval was not given.
maintenance::ElectionTimings beat_for(const HeraldFlags& flags, postgres::PostgresLogAnnouncer& announcer) {
    auto timings = flags.timings();
    if (flags.interval.empty() && announcer.log_is_distributed()) {
        timings.interval = HeraldFlags::kCitusInterval;
        spdlog::info("herald: the log is distributed over Citus: a beat every {} ms (--herald-interval)",
                     timings.interval.count());
    }
    return timings;
}

/// A herald wired to PostgreSQL: its own session, the herald's lease, one step.
class HeraldProcess {
public:
    HeraldProcess(const std::string& db, const HeraldFlags& flags, const std::string& holder)
        : session_(db),
          store_(session_, postgres::Lease::herald),
          announcer_(session_),
          step_(announcer_),
          role_("herald", store_, {&step_}, holder, beat_for(flags, announcer_)) {}

    maintenance::ElectedRole& role() { return role_; }

private:
    postgres::PostgresSession session_;
    postgres::PostgresLeaseStore store_;
    postgres::PostgresLogAnnouncer announcer_;
    maintenance::AnnounceStep step_;
    maintenance::ElectedRole role_;
};

void take_part_in_heralding(const std::string& db, const HeraldFlags& flags, const StopSignal& stop) {
    const auto timings = flags.timings();
    const auto holder = maintenance::unique_holder_name();  // one name for every attempt
    compete_until_stopped(
        "herald", timings.lease, stop,
        [&] {
            HeraldProcess process(db, flags, holder);
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
    flags.timings();  // bad flags: a usage error here, not in the thread
    stop.on_stop([own = stop_] { own->request_stop(); });
    thread_.emplace([db, flags, own = stop_] { take_part_in_heralding(db, flags, *own); });
}

HeraldThread::~HeraldThread() {
    stop_->request_stop();
    if (thread_) thread_->join();
}

}  // namespace tributary::cli
