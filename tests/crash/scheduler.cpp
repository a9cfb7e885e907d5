#include "scheduler.h"

#include <thread>

#include "cluster.h"
#include "hostile.h"
#include "live_consumers.h"
#include "processes.h"
#include "proxy.h"
#include "report.h"
#include "run_options.h"
#include "supervisor.h"

namespace tributary::crash {

namespace {

using Clock = std::chrono::steady_clock;

/// The prefix of the names under which the loader prepares its one-statement
/// appends (src/postgres/postgres_source_turn.cpp: tributary_turn_append,
/// tributary_turn_append_keyed), for the proxy's cut after an append's commit.
constexpr const char* kAppendStatements = "tributary_turn_append";

struct Weighted {
    int kind;
    double weight;
    bool needs_proxy;
    bool needs_receivers = false;
    bool needs_consumers = false;
    bool needs_citus = false;
};

/// The statement every read of `tributary consume` runs (its prepared
/// src/postgres/statements/group_log/next.sql, which acks the batch before),
/// as pg_stat_activity shows it: a comment comes first, so it is matched
/// anywhere in the text.
constexpr const char* kConsumerRead = "%tributary.consumer_next(";

}  // namespace

Scheduler::Scheduler(SchedulerConfig config, Supervisor& supervisor, Supervisor* receivers, Supervisor* consumers,
                     Cluster& cluster, Proxy* proxy, HostileEpisodes& hostile, Tally& tally)
    : config_(config),
      supervisor_(supervisor),
      receivers_(receivers),
      consumers_(consumers),
      cluster_(cluster),
      proxy_(proxy),
      hostile_(hostile),
      tally_(tally),
      random_(config.seed) {}

std::chrono::milliseconds Scheduler::between(int min_ms, int max_ms) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int>(min_ms, max_ms)(random_));
}

int Scheduler::random_loader() { return std::uniform_int_distribution<int>(0, supervisor_.size() - 1)(random_); }

std::optional<int> Scheduler::leading_loader(const std::string& role) const {
    try {
        // The holder is named host:pid:suffix (src/maintenance/holder_name.cpp).
        const auto rows = cluster_.query("SELECT split_part(holder, ':', 2) FROM tributary." + role +
                                         "_lease WHERE expires_at > clock_timestamp()");
        if (rows.empty() || rows[0][0].empty() || rows[0][0] == "NULL") return std::nullopt;
        const pid_t pid = std::stoi(rows[0][0]);
        for (int i = 0; i < supervisor_.size(); ++i)
            if (supervisor_.pid_if_ready(i) == pid) return i;
    } catch (const std::exception&) {
        // The database is restarting: no one to aim at.
    }
    return std::nullopt;
}

int Scheduler::target_loader() {
    // A third of the kills and pauses aim at the maintainer, so that its
    // lease changes hands often while partitions must keep being made ahead,
    // and a third at the herald (when a loader, not a receiver, holds it).
    const auto aim = std::uniform_int_distribution<int>(0, 2)(random_);
    const std::string role = aim == 0 ? "maintainer" : "herald";
    if (aim < 2)
        if (const auto i = leading_loader(role)) {
            tally_.observe("faults aimed at the " + role);
            return *i;
        }
    return random_loader();
}

void Scheduler::later(std::chrono::milliseconds delay, std::function<void()> action) {
    pending_.push_back({Clock::now() + delay, std::move(action)});
}

void Scheduler::run_due(bool all) {
    const auto now = Clock::now();
    // Actions may schedule more; take the due ones out first.
    std::vector<Pending> due;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (all || it->at <= now) {
            due.push_back(std::move(*it));
            it = pending_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& p : due) {
        try {
            p.action();
        } catch (const std::exception& e) {
            say(std::string("a timed action failed: ") + e.what());
        }
    }
}

bool Scheduler::proxy_quiet() const { return Clock::now() >= proxy_busy_until_; }

void Scheduler::run() {
    start_ = Clock::now();
    end_ = start_ + config_.duration;
    last_restart_ = start_;
    proxy_busy_until_ = start_;
    say("fault phase: " + std::to_string(config_.duration.count()) + " s, seed " + std::to_string(config_.seed));
    static const std::vector<Weighted> kKinds{
        {static_cast<int>(Kind::kill9), 3, false},
        {static_cast<int>(Kind::pause), 2, false},
        {static_cast<int>(Kind::terminate_lock_holders), 2, false},
        {static_cast<int>(Kind::pg_restart), 1, false},
        {static_cast<int>(Kind::proxy_cut), 1, true},
        {static_cast<int>(Kind::proxy_cut_after_commit), 1.5, true},
        {static_cast<int>(Kind::proxy_delay), 1, true},
        {static_cast<int>(Kind::proxy_outage), 0.5, true},
        {static_cast<int>(Kind::proxy_blackhole), 0.5, true},
        {static_cast<int>(Kind::hostile), 4, false},
        {static_cast<int>(Kind::sigterm), 0.7, false},
        {static_cast<int>(Kind::kill9_receiver), 2, false, true},
        {static_cast<int>(Kind::sigterm_receiver), 0.5, false, true},
        {static_cast<int>(Kind::terminate_receiver_sessions), 1, false, true},
        {static_cast<int>(Kind::proxy_cut_after_receiver_commit), 1.5, true, true},
        {static_cast<int>(Kind::kill9_receiver_mid_commit), 1.5, false, true},
        {static_cast<int>(Kind::kill9_consumer), 2, false, false, true},
        {static_cast<int>(Kind::pause_consumer), 1.5, false, false, true},
        {static_cast<int>(Kind::kill9_consumer_mid_read), 1, false, false, true},
        {static_cast<int>(Kind::cut_after_prepare), 1.5, false, true, false, true},
        {static_cast<int>(Kind::shard_move), 2, false, false, false, true},
    };
    std::vector<double> weights;
    for (const auto& k : kKinds) {
        const bool cannot = (k.needs_proxy && !proxy_) || (k.needs_receivers && !receivers_) ||
                            (k.needs_consumers && !consumers_) || (k.needs_citus && !cluster_.citus());
        // On Citus the restarts come on a timer instead (below).
        const bool timed = cluster_.citus() && k.kind == static_cast<int>(Kind::pg_restart);
        weights.push_back(cannot || timed ? 0 : k.weight);
    }
    std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());

    auto next_fault = Clock::now() + between(1000, 3000);
    while (Clock::now() < end_ && !interrupted()) {
        run_due(false);
        hostile_.tick();
        // Three servers on Citus: one restart per restart_gap, each in turn, so
        // that a 2-minute run restarts the coordinator and both workers.
        if (cluster_.citus() && Clock::now() - last_restart_ >= config_.restart_gap) {
            try {
                restart_database();
            } catch (const std::exception& e) {
                say(std::string("fault injection failed: ") + e.what());
                last_restart_ = Clock::now();
            }
        }
        if (Clock::now() >= next_fault) {
            // A kind that cannot be done now (nothing to pause, too soon for a
            // restart) gives way to another draw, a few at most.
            for (int attempt = 0; attempt < 5; ++attempt) {
                try {
                    if (inject(static_cast<Kind>(kKinds[pick(random_)].kind))) break;
                } catch (const std::exception& e) {
                    say(std::string("fault injection failed: ") + e.what());
                    break;
                }
            }
            next_fault = Clock::now() + between(1000, 3000);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    say("fault phase over: healing everything");
    run_due(true);
    if (cluster_.citus()) {
        settle_two_phase_commits();
        finish_shard_moves();
    }
    if (proxy_) proxy_->control("/heal");
    for (int i = 0; i < supervisor_.size(); ++i) supervisor_.resume(i);
    if (consumers_)
        for (int i = 0; i < consumers_->size(); ++i) consumers_->resume(i);
    hostile_.end_all();
}

bool Scheduler::inject(Kind kind) {
    switch (kind) {
        case Kind::kill9: {
            const int i = target_loader();
            if (!supervisor_.kill9(i)) return false;
            tally_.fault("kill -9 loader");
            say("kill -9 " + supervisor_.spec(i).name);
            return true;
        }
        case Kind::pause: return pause_loader();
        case Kind::terminate_lock_holders: {
            const bool all = std::bernoulli_distribution(0.5)(random_);
            const int n = cluster_.terminate_lock_holders(all);
            tally_.disrupted();
            tally_.fault("pg_terminate_backend lock holders");
            tally_.observe("backends terminated (lock holders)", n);
            say("pg_terminate_backend of " + std::string(all ? "all" : "one of the") +
                " advisory lock holders: " + std::to_string(n));
            return true;
        }
        case Kind::pg_restart: return restart_database();
        case Kind::cut_after_prepare: return cut_after_prepare();
        case Kind::shard_move: return shard_move();
        case Kind::hostile: return begin_hostile();
        case Kind::sigterm: {
            // Not while the proxy stalls sessions: a stop waits for the batch
            // being stored, and a blackholed COMMIT can take minutes to fail.
            const int i = random_loader();
            if (!proxy_quiet() && supervisor_.spec(i).via_proxy) return false;
            if (!supervisor_.terminate(i)) return false;
            tally_.fault("SIGTERM loader (graceful restart)");
            say("SIGTERM " + supervisor_.spec(i).name);
            return true;
        }
        case Kind::kill9_receiver:
        case Kind::sigterm_receiver:
        case Kind::terminate_receiver_sessions:
        case Kind::kill9_receiver_mid_commit: return receiver_fault(kind);
        case Kind::kill9_consumer:
        case Kind::pause_consumer:
        case Kind::kill9_consumer_mid_read: return consumer_fault(kind);
        default: return proxy_fault(kind);
    }
}

bool Scheduler::receiver_fault(Kind kind) {
    if (!receivers_) return false;
    const int i = std::uniform_int_distribution<int>(0, receivers_->size() - 1)(random_);
    const auto& spec = receivers_->spec(i);
    switch (kind) {
        case Kind::kill9_receiver:
            // Whatever it had taken in, committed or not, is unanswered: the sender retries it.
            if (!receivers_->kill9(i)) return false;
            tally_.fault("kill -9 receiver");
            say("kill -9 " + spec.name);
            return true;
        case Kind::kill9_receiver_mid_commit: {
            // A plain kill -9 rarely lands between a group commit's COMMIT
            // and its answers. Here the receiver is frozen (SIGSTOP) while
            // its COMMIT runs in the server, which completes it, and killed
            // a moment later: its events stored, their answers never sent.
            if (!cluster_.wait_for_statement(spec.name, "COMMIT", std::chrono::seconds(3))) return false;
            if (!receivers_->pause(i)) return false;
            tally_.fault("kill -9 receiver mid-commit (SIGSTOP during its COMMIT)");
            say("SIGSTOP " + spec.name + " during its COMMIT; kill -9 follows");
            later(between(300, 1500), [this, i, name = spec.name] {
                if (receivers_->kill9(i)) say("kill -9 " + name + " (stopped mid-commit)");
            });
            return true;
        }
        case Kind::sigterm_receiver:
            // It answers what it has queued, then exits 0; a blackholed commit could hold it up.
            if (!proxy_quiet() && spec.via_proxy) return false;
            if (!receivers_->terminate(i)) return false;
            tally_.fault("SIGTERM receiver (graceful restart)");
            say("SIGTERM " + spec.name);
            return true;
        case Kind::terminate_receiver_sessions: {
            const int n = cluster_.terminate_application(spec.name);
            tally_.disrupted();
            tally_.fault("pg_terminate_backend receiver sessions");
            tally_.observe("backends terminated (receiver)", n);
            say("pg_terminate_backend of " + spec.name + "'s sessions: " + std::to_string(n));
            return true;
        }
        default: return false;
    }
}

bool Scheduler::consumer_fault(Kind kind) {
    if (!consumers_) return false;
    const int i = std::uniform_int_distribution<int>(0, consumers_->size() - 1)(random_);
    const auto& spec = consumers_->spec(i);
    switch (kind) {
        case Kind::kill9_consumer:
            // Its batch in hand (handled or not, never acked: the ack rides on
            // the next read) comes back to a consumer of its lane after the lease.
            if (!consumers_->kill9(i)) return false;
            tally_.fault("kill -9 consumer");
            say("kill -9 " + spec.name);
            return true;
        case Kind::kill9_consumer_mid_read: {
            // Frozen while its read runs in the server, which completes it:
            // the previous batch acked and a new one leased to a consumer that
            // dies before its command sees it (a plain kill -9 rarely lands there).
            if (!cluster_.wait_for_statement(spec.name, kConsumerRead, std::chrono::seconds(3))) return false;
            if (!consumers_->pause(i)) return false;
            tally_.fault("kill -9 consumer mid-read (SIGSTOP during its consumer_next)");
            say("SIGSTOP " + spec.name + " during its read; kill -9 follows");
            later(between(300, 1500), [this, i, name = spec.name] {
                if (consumers_->kill9(i)) say("kill -9 " + name + " (stopped mid-read)");
            });
            return true;
        }
        case Kind::pause_consumer: {
            // One at a time, as for the loaders. Longer than the group's lease
            // (5 s): its lanes and its batch in hand pass to the others, and
            // it wakes up to settle a batch it no longer holds.
            if (consumers_->paused_count().value_or(1) > 0) return false;
            // A read held up in the proxy could reach the server after the note below.
            if (!proxy_quiet() && spec.via_proxy) return false;
            if (!consumers_->pause(i)) return false;
            if (!note_batches_in_hand(cluster_, spec.name, config_.consumer_record_dir)) {
                consumers_->resume(i);
                return false;
            }
            const auto pause_for = between(5000, 15000);
            const bool terminate = std::bernoulli_distribution(0.5)(random_);
            tally_.fault(std::string("SIGSTOP consumer") + (terminate ? " + terminate its sessions" : ""));
            say("SIGSTOP " + spec.name + " for " + std::to_string(pause_for.count()) + " ms" +
                (terminate ? ", its sessions terminated meanwhile" : ""));
            if (terminate)
                later(between(1000, 3000), [this, name = spec.name] {
                    const int n = cluster_.terminate_application(name);
                    tally_.observe("backends terminated (paused consumer)", n);
                });
            later(pause_for, [this, i, name = spec.name] {
                if (consumers_->resume(i)) say("SIGCONT " + name);
            });
            return true;
        }
        default: return false;
    }
}

bool Scheduler::begin_hostile() {
    const auto now = Clock::now();
    const auto window = config_.hostile_window;
    const auto into = now - start_;
    if ((into / window) % 2 == 1) return false;  // a calm window
    const auto left = window - into % window;
    const auto duration = between(5000, 12000);
    if (duration > left) return false;  // would run into the calm window
    return hostile_.begin(random_, end_ - now > config_.long_backoff_quiet, duration);
}

bool Scheduler::pause_loader() {
    if (supervisor_.paused_count().value_or(1) > 0) return false;  // one zombie at a time
    const int i = target_loader();
    const std::string name = supervisor_.spec(i).name;
    // Half the time, in the middle of a source's turn (holding its lock):
    // the zombie then wakes up with a batch or a request in hand.
    const bool mid_turn = std::bernoulli_distribution(0.5)(random_) && supervisor_.pid_if_ready(i) &&
                          cluster_.wait_for_lock_held_by(name, std::chrono::seconds(3));
    if (!supervisor_.pause(i)) return false;
    const auto pause_for = between(5000, 20000);
    const bool terminate = std::bernoulli_distribution(0.5)(random_);
    tally_.fault(std::string("SIGSTOP loader") + (mid_turn ? " mid-turn" : "") +
                 (terminate ? " + terminate its sessions" : ""));
    say("SIGSTOP " + name + (mid_turn ? " in the middle of a turn" : "") + " for " + std::to_string(pause_for.count()) +
        " ms" + (terminate ? ", its sessions terminated meanwhile" : ""));
    if (terminate) {
        // Its locks vanish while it sleeps; another loader takes its sources.
        later(between(1000, std::min<int>(3000, static_cast<int>(pause_for.count()) - 1000)), [this, name] {
            const int n = cluster_.terminate_application(name);
            tally_.observe("backends terminated (paused loader)", n);
            say("terminated " + std::to_string(n) + " sessions of paused " + name);
        });
    }
    later(pause_for, [this, i, name] {
        if (supervisor_.resume(i)) say("SIGCONT " + name);
    });
    return true;
}

bool Scheduler::restart_database() {
    const auto now = Clock::now();
    if (now - last_restart_ < config_.restart_gap) return false;
    const std::string mode = std::bernoulli_distribution(0.5)(random_) ? "immediate" : "fast";
    // On Citus, the three servers in turn from a random first: the
    // coordinator (every session and lock), or a worker (the turns, events
    // and watermarks of its shards). In turn, so that a short run restarts each.
    const auto nodes = cluster_.nodes();
    if (!next_restart_node_)
        next_restart_node_ = std::uniform_int_distribution<std::size_t>(0, nodes.size() - 1)(random_);
    const std::string node = nodes[(*next_restart_node_)++ % nodes.size()];
    const std::string what = "PostgreSQL restart -m " + mode + (node.empty() ? "" : " of " + node);
    say(what);
    tally_.disrupted();
    cluster_.restart(mode, node);
    tally_.disrupted();
    last_restart_ = Clock::now();
    tally_.fault(node.empty() ? what
                              : "PostgreSQL restart -m " + mode +
                                    (node == "coordinator" ? " of the coordinator" : " of a worker"));
    say(what + ": back after " +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(last_restart_ - now).count()) + " ms");
    return true;
}

bool Scheduler::cut_after_prepare() {
    // A receiver's group commit that wrote to both workers commits in two
    // phases: the coordinator's connection to one worker is cut after that
    // worker's PREPARE, before its COMMIT PREPARED. The coordinator's
    // commit stands; the worker's prepared transaction holds its lanes back
    // until Citus' recovery commits it. No group may move past it.
    const std::string worker = std::bernoulli_distribution(0.5)(random_) ? "worker1" : "worker2";
    const int n = cluster_.cut_after_prepare(worker, std::chrono::seconds(3));
    if (n == 0) return false;
    tally_.disrupted();
    tally_.fault("connection to a worker cut after its PREPARE TRANSACTION");
    tally_.observe("worker sessions cut after PREPARE", n);
    say("cut " + std::to_string(n) + " session(s) on " + worker + " after their PREPARE TRANSACTION");
    return true;
}

bool Scheduler::shard_move() {
    // A lane that holds sources of the run moves to the other worker while
    // everything runs: its loaders, receivers and consumers go on, and no
    // group may skip or repeat an event of it (docs/citus.md "Moving a shard").
    const auto rows = cluster_.query(
        "SELECT l.lane, tributary.group_node(n.groupid) FROM tributary.citus_lanes l, pg_dist_node n "
        "WHERE n.groupid NOT IN (0, l.node_group) AND n.noderole = 'primary' AND n.isactive "
        "AND l.moving_since IS NULL AND l.lane IN (SELECT tributary.shard_lane(s.id) FROM tributary.sources s)");
    if (rows.empty()) return false;
    const auto& row = rows[std::uniform_int_distribution<std::size_t>(0, rows.size() - 1)(random_)];
    tally_.disrupted();
    tally_.fault("shard moved to the other worker (tributary shard move)");
    move_lane(row[0], row[1]);
    // Its sources' writes waited for the copy (block_writes).
    cluster_.mark_disturbed(std::chrono::seconds(5));
    return true;
}

bool Scheduler::move_lane(const std::string& lane, const std::string& to) {
    const auto began = Clock::now();
    const auto done = run_to_end(
        {config_.tributary, "shard", "move", "--lane", lane, "--to", to, "--db", cluster_.url("crash-shard-move")},
        std::chrono::seconds(120));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began).count();
    if (done.code == 0) {
        tally_.observe("shard moves completed", 1);
        say("shard move: lane " + lane + " to " + to + " in " + std::to_string(ms) + " ms");
        return true;
    }
    // A restart or a cut met it: the lane stays unread until the move is run again.
    tally_.observe("shard moves interrupted", 1);
    say("shard move: lane " + lane + " to " + to + " failed after " + std::to_string(ms) +
        " ms: " + tail_lines(done.err, 2));
    return false;
}

void Scheduler::settle_two_phase_commits() {
    // A cut after PREPARE late in the run leaves its worker's part for Citus'
    // recovery, up to a minute later (citus.recover_2pc_interval): run it now,
    // as the maintenance daemon would, so that the checks see those events.
    for (int attempt = 0; attempt < 10; ++attempt) {
        try {
            say("Citus' recovery of the two-phase commits left in doubt: " +
                std::to_string(cluster_.recover_prepared()));
            return;
        } catch (const std::exception& e) {
            say(std::string("Citus' recovery failed (tried again): ") + e.what());
        }
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }
}

void Scheduler::finish_shard_moves() {
    for (int attempt = 0; attempt < 10; ++attempt) {
        try {
            const auto rows = cluster_.query(
                "SELECT l.lane, tributary.group_node(l.moving_to) FROM tributary.citus_lanes l "
                "WHERE l.moving_since IS NOT NULL");
            if (rows.empty()) return;
            for (const auto& row : rows) move_lane(row[0], row[1]);
        } catch (const std::exception& e) {
            say(std::string("shard moves: the lanes could not be read: ") + e.what());
        }
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    tally_.anomaly("shard_move_unfinished", "a lane was still marked moving after 10 attempts to finish its move");
}

bool Scheduler::proxy_fault(Kind kind) {
    if (!proxy_ || !proxy_quiet()) return false;
    tally_.disrupted();
    switch (kind) {
        case Kind::proxy_cut:
            say("proxy: cut every connection: " + proxy_->control("/cut"));
            cluster_.mark_disturbed(std::chrono::seconds(5));
            tally_.fault("proxy cut");
            return true;
        case Kind::proxy_cut_after_commit: {
            const int count = std::uniform_int_distribution<int>(1, 3)(random_);
            // Any commit is most often a worker's scheduling query, the first
            // statement after it wakes; half the time the cut waits for the
            // commit of a batch: the one-statement appends of every style
            // (tributary's prepared tributary_turn_append*). COPY batches
            // commit with COMMIT, which "any commit" reaches.
            const bool appends = std::bernoulli_distribution(0.5)(random_);
            say("proxy: cut after the next " + std::to_string(count) + (appends ? " append commit(s)" : " COMMIT(s)"));
            proxy_->control("/cut-after-commit?count=" + std::to_string(count) +
                            (appends ? "&statement=" + std::string(kAppendStatements) : ""));
            cluster_.mark_disturbed(std::chrono::seconds(10));
            // Left armed, it would fire during the drain; disarm after a while.
            later(between(3000, 6000), [this] { proxy_->control("/cut-after-commit?count=0"); });
            tally_.fault(appends ? "proxy cut after an append's commit" : "proxy cut after COMMIT");
            return true;
        }
        case Kind::proxy_delay: {
            const int ms = std::uniform_int_distribution<int>(20, 400)(random_);
            const auto lasts = between(2000, 6000);
            say("proxy: delay " + std::to_string(ms) + " ms for " + std::to_string(lasts.count()) + " ms");
            proxy_->control("/delay?ms=" + std::to_string(ms));
            proxy_busy_until_ = Clock::now() + lasts;
            later(lasts, [this] { proxy_->control("/delay?ms=0"); });
            tally_.fault("proxy delay burst");
            return true;
        }
        case Kind::proxy_outage: {
            const auto lasts = between(1000, 4000);
            say("proxy: refuse new connections and cut the open ones for " + std::to_string(lasts.count()) + " ms");
            proxy_->control("/refuse?on=1");
            proxy_->control("/cut");
            cluster_.mark_disturbed(std::chrono::seconds(20));
            proxy_busy_until_ = Clock::now() + lasts;
            later(lasts, [this] { proxy_->control("/refuse?on=0"); });
            tally_.fault("proxy outage (refuse + cut)");
            return true;
        }
        case Kind::proxy_cut_after_receiver_commit: {
            // A receiver's group commit is BEGIN, receiver_store, COMMIT: a
            // COMMIT statement, which the loaders send only around COPY
            // batches, so this cut lands mostly on the proxied receiver: its
            // commit done, the answer lost. It must not answer 2xx, and the
            // sender's retry must store nothing twice.
            const int count = std::uniform_int_distribution<int>(1, 3)(random_);
            say("proxy: cut after the next " + std::to_string(count) + " COMMIT statement(s) (receiver commits)");
            proxy_->control("/cut-after-commit?count=" + std::to_string(count) + "&statement=COMMIT");
            cluster_.mark_disturbed(std::chrono::seconds(10));
            later(between(3000, 6000), [this] { proxy_->control("/cut-after-commit?count=0"); });
            tally_.fault("proxy cut after a COMMIT statement (receiver commits)");
            return true;
        }
        case Kind::proxy_blackhole: {
            const auto lasts = between(1000, 4000);
            say("proxy: blackhole for " + std::to_string(lasts.count()) + " ms");
            proxy_->control("/blackhole?on=1");
            cluster_.mark_disturbed(std::chrono::seconds(20));
            proxy_busy_until_ = Clock::now() + lasts;
            later(lasts, [this] { proxy_->control("/blackhole?on=0"); });
            tally_.fault("proxy blackhole");
            return true;
        }
        default: return false;
    }
}

}  // namespace tributary::crash
