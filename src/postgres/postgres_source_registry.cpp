#include "postgres_source_registry.h"

#include <cmath>
#include <sstream>

#include "control_channel.h"

namespace tributary::postgres {

namespace {

constexpr const char* kSchedule = "tributary_schedule";
constexpr const char* kNudge = "tributary_nudge";

// A nudge never lets a request through sooner than the gate would: it only
// brings an idle source's next request forward to one interval after the
// last one ended, and only when that request is over and went well (a
// request in flight holds its lease; a failing source keeps its backoff).
// It always records itself, so that a request in flight ends at the
// interval rather than an idle pause.
constexpr const char* kNudgeSql = R"sql(
UPDATE tributary.gates g
   SET nudged_at = now(), empty_streak = 0,
       next_allowed_at = CASE WHEN g.failures = 0 AND g.last_success_at >= g.last_request
                              THEN least(g.next_allowed_at,
                                         greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms'))
                              ELSE g.next_allowed_at END
  FROM tributary.sources s
 WHERE s.name = $1 AND g.source_id = s.id
RETURNING g.source_id)sql";

// For `run --until-idle`: every source waiting out an idle pause becomes due
// as a nudge would make it (one interval after its last answer), so that a
// catch-up run asks each source rather than trusting an old empty answer.
constexpr const char* kWakeIdleSql = R"sql(
UPDATE tributary.gates g
   SET next_allowed_at = greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms')
  FROM tributary.sources s
 WHERE g.source_id = s.id AND s.enabled AND g.failures = 0 AND g.last_success_at >= g.last_request
   AND g.next_allowed_at > greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms'))sql";

/// Source changes reach running loaders at commit (a hint, see control_channel.h).
void tell_loaders(pqxx::transaction_base& tx) {
    tx.exec_params("SELECT pg_notify($1, 'sources')", kControlChannel);
}

// One statement, one `now()`: the due sources of the share ($1 = workers,
// $2 = this worker's index, $3 = take-over delay in ms) with what the fetcher
// needs, earliest due first; then a summary row (id NULL) for the rest. The
// summary row always exists: an aggregate over no rows still returns one.
// The conditions are on the gates' own columns, so they filter the gates
// scan before any join. A source with a request in flight (its lease not
// closed) is not "pending" for anyone else: its holder sees it through, and
// a worker waiting on it would sleep past its backoff and ask it again.
constexpr const char* kScheduleSql = R"sql(
(SELECT s.id, s.name, s.url, array_to_string(s.headers, E'\n'), s.interval_ms, s.batch_size, s.timeout_ms, true,
        NULL::double precision, NULL::bigint
   FROM tributary.gates g JOIN tributary.sources s ON s.id = g.source_id
  WHERE s.enabled
    AND g.next_allowed_at <= now() - CASE WHEN g.source_id % $1 = $2 THEN interval '0' ELSE $3 * interval '1 ms' END
  ORDER BY g.next_allowed_at, g.source_id)
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       extract(epoch FROM min(due_for_us) - now()) * 1000,
       count(*) FILTER (WHERE NOT drained AND failures = 0 AND lease = closed_lease)
  FROM (SELECT g.next_allowed_at + CASE WHEN g.source_id % $1 = $2 THEN interval '0' ELSE $3 * interval '1 ms' END
               AS due_for_us, g.drained, g.failures, g.lease, g.closed_lease
          FROM tributary.gates g
         WHERE NOT EXISTS (SELECT FROM tributary.sources s WHERE s.id = g.source_id AND NOT s.enabled)) later
 WHERE due_for_us > now())sql";

// Headers travel as one newline-separated string (a header cannot contain a
// newline), which spares us array-literal quoting.
constexpr const char* kSourceColumns =
    "id, name, url, array_to_string(headers, E'\\n'), interval_ms, batch_size, timeout_ms, enabled";

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines) text += (text.empty() ? "" : "\n") + line;
    return text;
}

SourceRecord to_record(const pqxx::row& row) {
    SourceRecord record;
    Source& s = record.source;
    s.id = row[0].as<int>();
    s.name = row[1].as<std::string>();
    s.endpoint.url = row[2].as<std::string>();
    s.endpoint.headers = split_lines(row[3].as<std::string>());
    s.interval = std::chrono::milliseconds(row[4].as<int>());
    s.batch_size = row[5].as<int>();
    s.endpoint.timeout = std::chrono::milliseconds(row[6].as<int>());
    record.enabled = row[7].as<bool>();
    return record;
}

template <typename T>
std::optional<T> optional_field(const pqxx::field& field) {
    if (field.is_null()) return std::nullopt;
    return field.as<T>();
}

}  // namespace

PostgresSourceRegistry::PostgresSourceRegistry(PostgresSession& session) : session_(session) {
    session_.prepare(kSchedule, kScheduleSql);
    session_.prepare(kNudge, kNudgeSql);
}

std::size_t PostgresSourceRegistry::wake_idle_sources() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return static_cast<std::size_t>(tx.exec(kWakeIdleSql).affected_rows());
    });
}

bool PostgresSourceRegistry::nudge(const std::string& name) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto r = tx.exec_prepared(kNudge, name);
        if (r.empty()) return false;
        tell_loaders(tx);
        tx.commit();
        return true;
    });
}

SourceSchedule PostgresSourceRegistry::schedule(const ScheduleShare& share) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        SourceSchedule schedule;
        const int count = std::max(share.count, 1);
        for (const auto& row : tx.exec_prepared(kSchedule, count, share.index % count,
                                                static_cast<double>(share.take_over_after.count()))) {
            if (!row[0].is_null()) {
                schedule.due.push_back(to_record(row).source);
                continue;
            }
            if (!row[8].is_null())
                schedule.next_due_in = std::chrono::milliseconds(static_cast<long long>(std::ceil(row[8].as<double>())));
            schedule.pending = row[9].as<std::size_t>();
        }
        return schedule;
    });
}

int PostgresSourceRegistry::add(const SourceSpec& spec) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto existing = tx.exec_params("SELECT 1 FROM tributary.sources WHERE name = $1", spec.name);
        if (!existing.empty()) throw NameError("a source named '" + spec.name + "' exists already");
        const int id = tx.exec_params1(
                             "INSERT INTO tributary.sources (name, url, headers, interval_ms, batch_size, timeout_ms)"
                             " VALUES ($1, $2, string_to_array($3, E'\\n'), $4, $5, $6) RETURNING id",
                             spec.name, spec.url, join_lines(spec.headers), spec.interval_ms, spec.batch_size,
                             spec.timeout_ms)[0]
                           .as<int>();
        tx.exec_params("INSERT INTO tributary.cursors (source_id, last_event_id) VALUES ($1, $2)", id, spec.after_id);
        tx.exec_params("INSERT INTO tributary.gates (source_id) VALUES ($1)", id);
        tell_loaders(tx);
        tx.commit();
        return id;
    });
}

std::vector<SourceRecord> PostgresSourceRegistry::list() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        std::vector<SourceRecord> records;
        for (const auto& row : tx.exec(std::string("SELECT ") + kSourceColumns + " FROM tributary.sources ORDER BY name"))
            records.push_back(to_record(row));
        return records;
    });
}

void PostgresSourceRegistry::set_enabled(const std::string& name, bool enabled) {
    session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto r = tx.exec_params("UPDATE tributary.sources SET enabled = $2 WHERE name = $1", name, enabled);
        if (r.affected_rows() == 0) throw NameError("no source named '" + name + "' (see `tributary source list`)");
        tell_loaders(tx);
        tx.commit();
    });
}

void PostgresSourceRegistry::remove(const std::string& name) {
    session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto found = tx.exec_params(
            "SELECT s.id, c.events_stored FROM tributary.sources s JOIN tributary.cursors c ON c.source_id = s.id"
            // The cursor row too: a batch being stored holds it, and we must
            // see its count once it is done.
            " WHERE s.name = $1 FOR UPDATE OF s, c",
            name);
        if (found.empty()) throw NameError("no source named '" + name + "' (see `tributary source list`)");
        const auto id = found[0][0].as<int>();
        const auto stored = found[0][1].as<std::int64_t>();
        if (stored > 0)
            throw std::runtime_error("source '" + name + "' has " + std::to_string(stored) +
                                     " stored events, and tributary never deletes events: use `tributary source "
                                     "pause " + name + "` to stop loading it");
        tx.exec_params("DELETE FROM tributary.sources WHERE id = $1", id);
        tell_loaders(tx);
        tx.commit();
    });
}

std::vector<SourceStatus> PostgresSourceRegistry::status() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        const auto rows = tx.exec(R"sql(
SELECT s.name, s.enabled, g.state, c.last_event_id, c.events_stored, g.failures,
       extract(epoch FROM now() - g.last_request)::float8,
       extract(epoch FROM now() - g.last_success_at)::float8,
       CASE WHEN g.next_allowed_at > now() THEN extract(epoch FROM g.next_allowed_at - now())::float8 ELSE 0 END,
       g.last_error,
       extract(epoch FROM now() - g.last_error_at)::float8,
       g.backlog,
       f.pid, f.holder_user, f.application,
       to_char(f.since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), f.reason
  FROM tributary.sources s
  JOIN tributary.cursors c ON c.source_id = s.id
  JOIN tributary.gates g ON g.source_id = s.id
  LEFT JOIN (SELECT DISTINCT ON (source_id) * FROM tributary.foreign_locks ORDER BY source_id, pid) f
         ON f.source_id = s.id
 ORDER BY s.name)sql");
        std::vector<SourceStatus> result;
        for (const auto& row : rows) {
            SourceStatus st;
            st.name = row[0].as<std::string>();
            st.enabled = row[1].as<bool>();
            st.state = row[2].as<std::string>();
            st.cursor = row[3].as<std::int64_t>();
            st.events_stored = row[4].as<std::int64_t>();
            st.failures = row[5].as<int>();
            st.seconds_since_request = optional_field<double>(row[6]);
            st.seconds_since_success = optional_field<double>(row[7]);
            st.seconds_until_allowed = row[8].is_null() ? 0 : row[8].as<double>();
            st.last_error = optional_field<std::string>(row[9]);
            st.seconds_since_error = optional_field<double>(row[10]);
            st.backlog = optional_field<std::int64_t>(row[11]);
            if (!row[12].is_null())
                st.locked_by = LockHolder{row[12].as<int>(), row[13].as<std::string>(""), row[14].as<std::string>(""),
                                          row[15].as<std::string>(""), row[16].as<std::string>("")};
            result.push_back(std::move(st));
        }
        return result;
    });
}

}  // namespace tributary::postgres
