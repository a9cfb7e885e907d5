#include "partitioned_log.h"

#include <map>
#include <set>
#include <sstream>

#include <pqxx/pqxx>

#include "cluster.h"
#include "report.h"

namespace tributary::crash {

namespace {

/// "{1,4,7}" (a PostgreSQL int[] as text) as a set.
std::set<long> int_array(const std::string& text) {
    std::set<long> out;
    std::string item;
    std::istringstream in(text.size() >= 2 ? text.substr(1, text.size() - 2) : "");
    while (std::getline(in, item, ','))
        if (!item.empty()) out.insert(std::stol(item));
    return out;
}

/// The partition a shard's table belongs to: tributary.events_9658_102040 is
/// a shard of tributary.events_9658 (Citus names a shard NAME_SHARDID).
std::string partition_of_shard(const std::string& shard) {
    const auto underscore = shard.rfind('_');
    return underscore == std::string::npos ? shard : shard.substr(0, underscore);
}

}  // namespace

void cut_log_small(const Cluster& cluster, const LogShape& shape) {
    pqxx::connection c(cluster.url());
    pqxx::work tx(c);
    // A first guess of the rate, so that partition_width() is first_width
    // until the maintainer's first sample (10 s in) replaces it.
    tx.exec_params(
        "UPDATE tributary.log_settings SET partition_span = make_interval(secs => $1), spans_ahead = $2,"
        " xids_per_second = $3::float8 / $1, sampled_at = NULL, sampled_xid = NULL",
        shape.partition_span_s, shape.spans_ahead, static_cast<double>(shape.first_width));
    for (const auto& row : tx.exec("SELECT name FROM tributary.partitions WHERE name <> 'events_0'"))
        tx.exec("DROP TABLE tributary." + tx.quote_name(row[0].as<std::string>()));
    tx.exec("DELETE FROM tributary.partitions WHERE name <> 'events_0'");
    const auto made = tx.exec("SELECT tributary.partitions_ahead()");
    const auto range =
        tx.exec1("SELECT min(from_tx)::text, max(to_tx)::text FROM tributary.partitions WHERE name <> 'events_0'");
    tx.commit();
    say("log cut small: partition_span " + std::to_string(shape.partition_span_s) + " s, spans_ahead " +
        std::to_string(shape.spans_ahead) + ", " + std::to_string(made.size()) + " partitions of " +
        std::to_string(shape.first_width) + " transaction ids ahead [" + range[0].c_str() + ", " + range[1].c_str() +
        ")");
}

PartitionCheck check_partitions(const std::string& db_url, long min_partitions, bool citus) {
    PartitionCheck out;
    for (const char* klass :
         {"default_partition_events", "partition_catalogue", "partition_sealed_early", "few_partitions"})
        out.report.counts[klass] = 0;
    pqxx::connection c(db_url);
    pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(c);

    // Where every event is, by partition and source.
    std::map<std::string, std::map<long, long>> events;  // partition -> source_id -> events
    for (const auto& row : tx.exec("SELECT tableoid::regclass::text, source_id, count(*) FROM tributary.events"
                                   " GROUP BY 1, 2"))
        events[citus ? partition_of_shard(row[0].as<std::string>()) : row[0].as<std::string>()][row[1].as<long>()] +=
            row[2].as<long>();
    // The partitions PostgreSQL has attached, by bare name.
    std::set<std::string> attached;
    for (const auto& row : tx.exec("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                                   " WHERE i.inhparent = 'tributary.events'::regclass"))
        attached.insert(row[0].as<std::string>());

    long in_default = 0;
    for (const auto& [name, by_source] : events) {
        long n = 0;
        for (const auto& [source, k] : by_source) n += k;
        if (name == "tributary.events_default") in_default = n;
        else ++out.partitions_with_events;
    }
    if (in_default)
        count_anomaly(
            out.report, "default_partition_events",
            std::to_string(in_default) + " events in events_default (no partition covered their transactions)",
            in_default);

    std::string previous_to;
    // p.from_tx: the column, not the output column of that name (its text, which sorts 11745 before 1745).
    for (const auto& row :
         tx.exec("SELECT p.name, p.from_tx::text, p.to_tx::text, p.sealed_at IS NOT NULL,"
                 " coalesce(p.source_ids::text, '{}') FROM tributary.partitions p ORDER BY p.from_tx")) {
        const auto name = row[0].as<std::string>();
        ++out.partitions;
        if (!attached.erase(name))
            count_anomaly(out.report, "partition_catalogue", name + " is catalogued but not attached");
        if (!previous_to.empty() && previous_to != row[1].c_str()) ++out.gaps;
        previous_to = row[2].c_str();
        if (!row[3].as<bool>()) continue;
        ++out.sealed;
        // Sealed: every transaction below its end had ended, so its sources were final.
        const auto recorded = int_array(row[4].as<std::string>());
        for (const auto& [source, n] : events["tributary." + name])
            if (!recorded.count(source))
                count_anomaly(out.report, "partition_sealed_early",
                              name + " was sealed with sources " + row[4].c_str() + " but holds " + std::to_string(n) +
                                  " events of source " + std::to_string(source));
    }
    attached.erase("events_default");
    for (const auto& name : attached)
        count_anomaly(out.report, "partition_catalogue", name + " is attached but not catalogued");
    if (out.partitions_with_events < min_partitions)
        count_anomaly(out.report, "few_partitions",
                      "the events are in " + std::to_string(out.partitions_with_events) + " partitions, fewer than " +
                          std::to_string(min_partitions) + ": the log hardly rolled over");

    out.xids_used =
        tx.exec1(
              "SELECT tributary.xid_minus(tributary.log_next_xid(), to_tx)::bigint FROM tributary.partitions"
              " WHERE name = 'events_0'")[0]
            .as<long long>();
    tx.commit();
    out.figures.push_back("partitioned log: events in " + std::to_string(out.partitions_with_events) + " of " +
                          std::to_string(out.partitions) + " partitions (" + std::to_string(out.sealed) + " sealed), " +
                          std::to_string(in_default) + " in events_default, " + std::to_string(out.gaps) +
                          " gap(s) between partitions; " + std::to_string(out.xids_used) +
                          " transaction ids used since setup");
    return out;
}

}  // namespace tributary::crash
