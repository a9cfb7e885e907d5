#include "live_consumers.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster.h"
#include "drain.h"
#include "proxy.h"
#include "report.h"
#include "run_options.h"

namespace tributary::crash {

const char* const kLiveGroup = "crash-live-lanes";
const char* const kInHandNotes = "in-hand-when-stopped.jsonl";

namespace {

constexpr int kLiveLanes = 4;
/// The group's lease, shorter than the default 30 s: a consumer SIGSTOPped
/// for 5-20 s then loses its lanes and its batch in flight to the others,
/// and a killed one's batch comes back within the fault phase, not after it.
constexpr const char* kLiveLease = "5 seconds";
/// Below the supervisor's 15 s graceful limit: a consumer stopped at the end
/// abandons a batch it cannot finish rather than hang.
constexpr const char* kShutdownTimeout = "5s";

/// The command each batch runs: a stamp line "@NANOSECONDS" (when the batch
/// reached its command), then the batch's NDJSON as handed. One file per
/// incarnation of a consumer (CRASH_INCARNATION, from the supervisor): a
/// command cut off by its consumer's kill -9 leaves a partial last line, and
/// only there, since the next incarnation writes another file. Stamps order
/// the batches of different consumers (one machine, one clock); within a
/// file, batches come in the order handed (one batch in hand at a time).
std::string record_command(const std::string& record_dir, const std::string& consumer) {
    return "{ echo \"@$(date +%s%N)\"; cat; } >> '" + record_dir + "/" + consumer + "'.\"$" + kIncarnationVariable +
           "\".ndjson";
}

}  // namespace

void create_live_group(const Cluster& cluster) {
    // On Citus a group has a lane per shard, and no other number.
    const std::string lanes = cluster.citus() ? "" : ", p_lanes => " + std::to_string(kLiveLanes);
    cluster.query(std::string("SELECT tributary.group_create('") + kLiveGroup + "', '>', 'beginning', p_lease => '" +
                  kLiveLease + "'" + lanes + ")");
    say(std::string("consumer group ") + kLiveGroup + ": " +
        (cluster.citus() ? std::string("a lane per shard") : std::to_string(kLiveLanes) + " lanes") + ", lease " +
        kLiveLease + ", from the beginning");
}

std::vector<ProcessSpec> live_consumer_specs(int count, const Cluster& cluster, const Proxy* proxy,
                                             const std::string& record_dir) {
    std::filesystem::create_directories(record_dir);
    std::vector<ProcessSpec> out;
    for (int i = 0; i < count; ++i) {
        ProcessSpec spec;
        spec.name = "crash-consumer-" + std::to_string(i);
        spec.via_proxy = proxy && i > 0;  // consumer 0 direct; the others through the proxy
        spec.db_url = cluster.url(spec.name, spec.via_proxy ? proxy->listen_port() : 0);
        // One name per slot, kept across restarts: a restarted consumer is
        // the same member of the group, as under systemd.
        spec.args = {"consume",
                     kLiveGroup,
                     "--consumer",
                     spec.name,
                     "--exec",
                     record_command(record_dir, spec.name),
                     "--shutdown-timeout",
                     kShutdownTimeout};
        out.push_back(std::move(spec));
    }
    return out;
}

SupervisorConfig live_consumer_config(const std::string& tributary_bin, const std::string& log_dir) {
    SupervisorConfig config;
    config.binary = tributary_bin;  // no fault points: kill -9, SIGSTOP and the database's faults are theirs
    config.role = "consumer";
    config.ready_line = " worker(s)";  // "consuming with 1 worker(s)", once its signal handling is in place
    config.log_dir = log_dir;
    return config;
}

bool note_batches_in_hand(const Cluster& cluster, const std::string& consumer, const std::string& record_dir) {
    try {
        // A read already in the server when the consumer stopped still
        // completes, and leases its batch: wait for it (a moment) first.
        const std::string active =
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND application_name = '" + consumer + "'";
        for (int i = 0; i < 20 && cluster.query(active).at(0).at(0) != "0"; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        // A first delivery's time is its row's created_at: a batch may have been
        // leased long before (its answer lost to a cut connection, the consumer
        // reading on without it), and only its lease time orders it rightly.
        const auto batches = cluster.query(
            "SELECT b.delivery, array_to_string(b.seqs, ','),"
            " CASE WHEN b.delivery = 1 THEN (extract(epoch FROM b.created_at) * 1e9)::bigint END"
            " FROM tributary.consumer_batches b"
            "  JOIN tributary.consumer_groups g ON g.id = b.group_id WHERE g.name = '" +
            std::string(kLiveGroup) + "' AND b.consumer = '" + consumer + "'");
        // Taken after the read: every batch above was handed before this.
        const auto stamp =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        std::ofstream notes(record_dir + "/" + kInHandNotes, std::ios::app);
        for (const auto& batch : batches)
            notes << "{\"stamp\":" << stamp << ",\"leased\":" << (batch.at(2) == "NULL" ? "null" : batch.at(2))
                  << ",\"consumer\":\"" << consumer << "\",\"delivery\":" << batch.at(0) << ",\"seqs\":[" << batch.at(1)
                  << "]}\n";
        notes.flush();
        return static_cast<bool>(notes);
    } catch (const std::exception& e) {
        say("could not note the batches in hand of " + consumer + ": " + e.what());
        return false;
    }
}

double drain_live_group(const Cluster& cluster, Tally& tally, std::chrono::seconds timeout) {
    say(std::string("draining the live group ") + kLiveGroup +
        ": waiting until nothing is behind, in flight or waiting for a retry");
    const std::string sql = std::string("SELECT events_behind, batches_in_flight, retries_waiting, unheld_lanes") +
                            " FROM tributary.group_status WHERE name = '" + kLiveGroup + "'";
    return wait_drained(
        "the live group's drain", tally, timeout,
        [&] {
            DrainLeft now;
            try {
                const auto row = cluster.query(sql).at(0);
                now.done = row[0] == "0" && row[1] == "0" && row[2] == "0";
                now.left = "behind " + row[0] + ", batches in flight " + row[1] + ", retries waiting " + row[2] +
                           ", unheld lanes " + row[3];
            } catch (const std::exception& e) {
                now.left = std::string("cannot read group_status: ") + e.what();
            }
            return now;
        },
        [&](const std::string& last) {
            return "the live group " + std::string(kLiveGroup) + " after " + std::to_string(timeout.count()) +
                   " s: " + last;
        });
}

}  // namespace tributary::crash
