#include "postgres_source_registry.h"

#include <cmath>
#include <sstream>

#include "advisory_keys.h"
#include "control_channel.h"
#include "optional_field.h"
#include "postgres/statements.h"
#include "source_reading.h"
#include "source_receiving.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

constexpr const char* kSchedule = "tributary_schedule";
constexpr const char* kNudge = "tributary_nudge";

namespace sql = statements::source_registry;

/// Source changes reach running loaders at commit (a hint, see control_channel.h).
void tell_loaders(pqxx::transaction_base& tx) { tx.exec_params(sql::tell_loaders, kControlChannel); }

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

SourceKind kind_named(const std::string& name) {
    if (name == "push") return SourceKind::pushed;
    if (name == "published") return SourceKind::published;
    return SourceKind::pulled;
}

/// A pushed source's receiving, from list.sql's columns 9-11.
void read_push_columns(const pqxx::row& row, SourceRecord& record) {
    record.kind = kind_named(row[9].as<std::string>());
    record.publishers = split_lines(row[11].as<std::string>());
    if (record.kind != SourceKind::pushed) return;
    record.push.id = record.source.id;
    record.push.name = record.source.name;
    record.push.enabled = record.enabled;
    try {
        read_receiving_json(row[10].as<std::string>(), record.push);
    } catch (const std::exception& e) {
        record.push.misconfigured = e.what();
    }
}

/// A source from schedule.sql's or list.sql's columns; list.sql's also have
/// the kind and how an unasked source is received (`with_kind`).
SourceRecord to_record(const pqxx::row& row, bool with_kind = false) {
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
    try {
        read_reading_json(row[8].as<std::string>("{}"), s);
    } catch (const std::exception& e) {
        s.misconfigured = e.what();
    }
    if (with_kind) read_push_columns(row, record);
    return record;
}

}  // namespace

const char* kind_name(SourceKind kind) {
    switch (kind) {
        case SourceKind::pulled: return "http";
        case SourceKind::pushed: return "push";
        case SourceKind::published: return "published";
    }
    return "http";
}

PostgresSourceRegistry::PostgresSourceRegistry(PostgresSession& session) : session_(session) {
    session_.prepare(kSchedule, sql::schedule);
    session_.prepare(kNudge, sql::nudge);
}

std::size_t PostgresSourceRegistry::wake_idle_sources() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return static_cast<std::size_t>(tx.exec(sql::wake_idle).affected_rows());
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
                schedule.due.back().revision = row[11].as<std::int64_t>();
                continue;
            }
            if (!row[9].is_null())
                schedule.next_due_in =
                    std::chrono::milliseconds(static_cast<long long>(std::ceil(row[9].as<double>())));
            schedule.pending = row[10].as<std::size_t>();
        }
        return schedule;
    });
}

int PostgresSourceRegistry::add(const SourceSpec& spec) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto existing = tx.exec_params(sql::exists, spec.name);
        if (!existing.empty()) throw NameError("a source named '" + spec.name + "' exists already");
        const bool pulled = spec.kind == SourceKind::pulled;
        const int id =
            tx.exec_params1(sql::add_source, kind_name(spec.kind), spec.name, pulled ? spec.url.c_str() : nullptr,
                            join_lines(spec.headers), spec.interval_ms, spec.batch_size, spec.timeout_ms,
                            pulled ? reading_json(spec.layout, spec.paging, spec.auth) : "{}",
                            spec.kind == SourceKind::pushed ? receiving_json(spec.push) : "{}",
                            join_lines(spec.publishers))[0]
                .as<int>();
        // Only a loader asks a source: the others have no cursor and no gate.
        if (pulled) {
            const bool by_id = spec.paging.style == PagingStyle::after_id;
            tx.exec_params(sql::add_cursor, id, by_id ? spec.after_id : 0, by_id ? nullptr : spec.start.c_str());
            tx.exec_params(sql::add_gate, id);
        }
        tx.exec(sql::sources_changed);
        tell_loaders(tx);
        tx.commit();
        return id;
    });
}

std::vector<SourceRecord> PostgresSourceRegistry::list() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        std::vector<SourceRecord> records;
        for (const auto& row : tx.exec(sql::list)) records.push_back(to_record(row, true));
        return records;
    });
}

std::string PostgresSourceRegistry::rewind(const std::string& name, const std::string& to) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto named = tx.exec_params(sql::id_of, name);
        if (named.empty()) throw NameError("no source named '" + name + "' (see `tributary source list`)");
        const int id = named[0][0].as<int>();
        const auto found = tx.exec_params(sql::lock_cursor, id);
        if (found.empty()) {
            const auto kind = tx.exec_params(sql::kind, name);
            throw InvalidRequest("source '" + name + "' is " +
                                 (!kind.empty() && kind[0][0].as<std::string>() == "push" ? "pushed" : "published") +
                                 ": it has no cursor to rewind (its events are kept by key)");
        }
        const auto& row = found[0];
        std::string from;
        if (row[1].is_null()) {  // keyed by id
            const auto cursor = row[0].as<std::int64_t>();
            if (to.empty() || to.size() > 19 || to.find_first_not_of("0123456789") != std::string::npos)
                throw InvalidRequest("source '" + name + "' is read by id: --to must be an id (0 or more)");
            const auto target = std::stoll(to);
            if (target > cursor)
                throw InvalidRequest("--to " + to + " is after the cursor (" + std::to_string(cursor) +
                                     "): a rewind reads again, it never skips");
            tx.exec_params(sql::rewind_to_id, id, target);
            from = std::to_string(cursor);
        } else {
            if (to.size() > 8192) throw InvalidRequest("--to is longer than 8192 bytes");
            tx.exec_params(sql::rewind_to_position, id, to);
            from = row[1].as<std::string>();
        }
        tx.exec_params(sql::record_rewind, id, from, to);
        tell_loaders(tx);
        tx.commit();
        return from;
    });
}

PostgresSourceRegistry::Edit PostgresSourceRegistry::edit(const std::string& name, const SourceSpec& spec,
                                                          const std::optional<std::string>& rewind_to) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::work tx(c);
            const auto row = tx.exec_params1(sql::edit, name, kAdvisoryNamespace, spec.url, join_lines(spec.headers),
                                             spec.interval_ms, spec.batch_size, spec.timeout_ms,
                                             reading_json(spec.layout, spec.paging, spec.auth),
                                             rewind_to ? rewind_to->c_str() : nullptr);
            tx.commit();
            Edit edit;
            edit.changed = split_lines(row[0].as<std::string>(""));
            edit.rewound_from = optional_field<std::string>(row[1]);
            edit.revision = row[2].as<std::int64_t>();
            return edit;
        });
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == "P0002") throw NameError(server_message(e));
        throw_api_error(e);
    }
}

std::optional<Cursor> PostgresSourceRegistry::cursor(const std::string& name, bool keyed_by_id) {
    return session_.run([&](pqxx::connection& c) -> std::optional<Cursor> {
        pqxx::read_transaction tx(c);
        const auto rows = tx.exec_params(sql::cursor, name);
        if (rows.empty()) return std::nullopt;
        if (keyed_by_id) return Cursor::at_id(rows[0][0].as<std::int64_t>(0));
        return Cursor::at(rows[0][1].as<std::string>(""), rows[0][2].as<std::int64_t>(0));
    });
}

void PostgresSourceRegistry::set_enabled(const std::string& name, bool enabled) {
    session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto r = tx.exec_params(sql::set_enabled, name, enabled);
        if (r.affected_rows() == 0) throw NameError("no source named '" + name + "' (see `tributary source list`)");
        tell_loaders(tx);
        tx.commit();
    });
}

void PostgresSourceRegistry::remove(const std::string& name) {
    session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto found = tx.exec_params(sql::lock_for_removal, name);
        if (found.empty()) throw NameError("no source named '" + name + "' (see `tributary source list`)");
        const auto id = found[0][0].as<int>();
        // Pushed and published sources have no cursor: check_removal
        // refuses them if they have events.
        const auto cursor = tx.exec_params(sql::cursor_for_removal, id);
        const auto stored = cursor.empty() ? 0 : cursor[0][0].as<std::int64_t>(0);
        if (stored > 0)
            throw std::runtime_error("source '" + name + "' has " + std::to_string(stored) +
                                     " stored events, and tributary never deletes events: use `tributary source "
                                     "pause " +
                                     name + "` to stop loading it");
        tx.exec_params(sql::check_removal, id, name);
        tx.exec_params(sql::remove, id);
        tx.exec(sql::sources_changed);
        tell_loaders(tx);
        tx.commit();
    });
}

std::vector<SourceStatus> PostgresSourceRegistry::status() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        const auto rows = tx.exec(sql::status);
        std::vector<SourceStatus> result;
        for (const auto& row : rows) {
            SourceStatus st;
            st.name = row[0].as<std::string>();
            st.enabled = row[1].as<bool>();
            st.kind = kind_named(row[24].as<std::string>());
            if (st.kind != SourceKind::pulled) {
                result.push_back(std::move(st));
                continue;
            }
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
            st.paging = row[17].as<std::string>();
            st.position = optional_field<std::string>(row[18]);
            st.taken = row[19].as<std::int64_t>(0);
            if (!row[20].is_null())
                st.last_rewind = SourceStatus::Rewind{row[20].as<std::string>(), row[21].as<std::string>(),
                                                      row[22].as<std::string>(), row[23].as<std::string>()};
            result.push_back(std::move(st));
        }
        return result;
    });
}

}  // namespace tributary::postgres
