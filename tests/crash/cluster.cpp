#include "cluster.h"

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <pqxx/pqxx>

#include "processes.h"
#include "report.h"

namespace tributary::crash {

namespace {

/// tributary's advisory lock namespace, 0x74726962 ("trib"), as pg_locks
/// shows it in classid for the two-int form.
constexpr const char* kLockClass = "1953655138";

long long now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

}  // namespace

Cluster::Cluster(std::string tmp_script, bool citus) : tmp_script_(std::move(tmp_script)), citus_(citus) {
    char dir[] = "/tmp/tributary-crash-pg.XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("cannot create a directory for the cluster under /tmp");
    dir_ = dir;
    const auto started = run_to_end({tmp_script_, "start", dir_}, std::chrono::minutes(3));
    if (started.code != 0) throw std::runtime_error(tmp_script_ + " start failed: " + tail_lines(started.err, 10));
    const auto colon = started.out.rfind(':');
    const auto slash = started.out.find('/', colon);
    port_ = std::stoi(started.out.substr(colon + 1, slash - colon - 1));
    // A two-phase commit cut after its PREPARE holds its worker's shards of
    // the log until Citus' recovery, and with them the maintainer's next
    // partition: the log cut small has some 10 s of partitions ahead, so
    // recovery must come sooner than Citus' minute (docs/citus.md, "The
    // maintainer on Citus"). 5 s still leaves the lanes and the retries to
    // wait at the prepared transaction.
    if (citus_) {
        query("ALTER SYSTEM SET citus.recover_2pc_interval = '5s'");
        query("SELECT pg_reload_conf()");
    }
    say(std::string(citus_ ? "Citus cluster (a coordinator and two workers)" : "PostgreSQL cluster") + " in " + dir_ +
        (citus_ ? ", coordinator" : "") + " on port " + std::to_string(port_));
}

Cluster::~Cluster() {
    try {
        const auto stopped = run_to_end({tmp_script_, "stop", dir_}, std::chrono::minutes(2));
        if (stopped.code != 0) say("stopping the cluster failed: " + tail_lines(stopped.err, 5));
        else say("stopped the cluster and removed " + dir_);
    } catch (const std::exception& e) {
        say(std::string("stopping the cluster failed: ") + e.what());
    }
}

std::vector<std::string> Cluster::nodes() const {
    if (!citus_) return {""};
    return {"coordinator", "worker1", "worker2"};
}

std::vector<std::pair<std::string, std::string>> Cluster::server_logs() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& node : nodes()) out.emplace_back(node, dir_ + (node.empty() ? "" : "/" + node) + "/log");
    return out;
}

std::string Cluster::node_url(const std::string& node) const {
    const auto found = run_to_end({tmp_script_, "url", dir_, node}, std::chrono::seconds(30));
    if (found.code != 0) throw std::runtime_error("no URL for " + node + ": " + tail_lines(found.err, 5));
    return found.out.substr(0, found.out.find('\n'));
}

std::string Cluster::url(const std::string& application_name, int port) const {
    return "postgresql://postgres@127.0.0.1:" + std::to_string(port ? port : port_) +
           "/tributary?application_name=" + application_name;
}

void Cluster::restart(const std::string& mode, const std::string& node) {
    restarting_ = true;
    std::vector<std::string> argv{tmp_script_, "restart", dir_};
    if (citus_) argv.push_back(node.empty() ? "coordinator" : node);
    argv.push_back(mode);
    auto done = run_to_end(argv, std::chrono::minutes(2));
    std::string brought_up;
    if (done.code != 0) {
        // A stop that outlasted pg_ctl's 60 s wait (an immediate stop of a worker under the suite's
        // load, now and then): the server comes up again once it has stopped, so that the run goes
        // on with every node, and the fault is reported as failed.
        std::vector<std::string> up{tmp_script_, "up", dir_};
        if (citus_) up.push_back(node.empty() ? "coordinator" : node);
        const auto again = run_to_end(up, std::chrono::minutes(2));
        brought_up = again.code == 0 ? " (up again after)" : " (and up failed: " + tail_lines(again.err, 5) + ")";
    }
    restarting_ = false;
    mark_disturbed(std::chrono::seconds(15));  // loaders that failed to start meanwhile may still be exiting
    if (done.code != 0)
        throw std::runtime_error("restart " + mode + " failed: " + tail_lines(done.err, 10) + brought_up);
}

int Cluster::terminate_lock_holders(bool all) {
    const std::string holders =
        std::string("SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = ") + kLockClass +
        " AND granted";
    const std::string sql = "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM (SELECT pid FROM (" +
                            holders + ") h" + (all ? "" : " ORDER BY random() LIMIT 1") + ") t";
    // A worker holds a source's lock only for its turn at that source, a few
    // milliseconds with fast sources: look again for a moment when none is held.
    for (int attempt = 0; attempt < 40; ++attempt) {
        const int n = std::stoi(query(sql).at(0).at(0));
        if (n > 0) return n;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
}

bool Cluster::wait_for_lock_held_by(const std::string& application_name, std::chrono::milliseconds timeout) const {
    // One session for the whole wait: a turn lasts milliseconds, a new
    // connection per look would miss most of them.
    pqxx::connection connection(url() + "&connect_timeout=5");
    const std::string sql = std::string(
                                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                                " WHERE l.locktype = 'advisory' AND l.classid = ") +
                            kLockClass + " AND l.granted AND a.application_name = " + quoted(application_name);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        pqxx::nontransaction tx(connection);
        if (tx.exec(sql)[0][0].as<int>() > 0) return true;
    }
    return false;
}

bool Cluster::wait_for_statement(const std::string& application_name, const std::string& statement,
                                 std::chrono::milliseconds timeout) const {
    // One session for the whole wait, as above: a commit lasts milliseconds.
    pqxx::connection connection(url() + "&connect_timeout=5");
    const std::string sql = "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND application_name = " +
                            quoted(application_name) + " AND query ILIKE " + quoted(statement + "%");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        pqxx::nontransaction tx(connection);
        if (tx.exec(sql)[0][0].as<int>() > 0) return true;
    }
    return false;
}

int Cluster::terminate_application(const std::string& application_name) {
    const auto rows = query(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = " +
        quoted(application_name));
    return std::stoi(rows.at(0).at(0));
}

int Cluster::cut_after_prepare(const std::string& worker, std::chrono::milliseconds timeout) {
    // One session for the whole wait: between a PREPARE TRANSACTION and its
    // COMMIT PREPARED there are a few milliseconds. The coordinator's
    // sessions on a worker are client backends whose last statement shows.
    pqxx::connection connection(node_url(worker) + "?application_name=crash-harness&connect_timeout=5");
    const std::string sql =
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND query ILIKE 'PREPARE TRANSACTION%'";
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        pqxx::nontransaction tx(connection);
        if (const int n = tx.exec(sql)[0][0].as<int>()) {
            mark_disturbed(std::chrono::seconds(10));
            return n;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the machine is shared with what it tests
    }
    return 0;
}

int Cluster::recover_prepared() { return std::stoi(query("SELECT recover_prepared_transactions()").at(0).at(0)); }

std::vector<std::vector<std::string>> Cluster::query(const std::string& sql) const {
    // A fresh session each time: the server may have restarted since the last one.
    pqxx::connection connection(url() + "&connect_timeout=5");
    pqxx::nontransaction tx(connection);
    std::vector<std::vector<std::string>> out;
    for (const auto& row : tx.exec(sql)) {
        std::vector<std::string> values;
        for (const auto& field : row) values.push_back(field.is_null() ? "NULL" : field.c_str());
        out.push_back(std::move(values));
    }
    return out;
}

void Cluster::mark_disturbed(std::chrono::seconds for_how_long) {
    const long long until = now_ms() + std::chrono::duration_cast<std::chrono::milliseconds>(for_how_long).count();
    long long seen = disturbed_until_ms_.load();
    while (seen < until && !disturbed_until_ms_.compare_exchange_weak(seen, until)) {
    }
}

bool Cluster::disturbed_recently() const { return restarting_ || now_ms() < disturbed_until_ms_.load(); }

}  // namespace tributary::crash
