#include "log_status_text.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "aligned_table.h"
#include "nullable_json.h"

namespace tributary::cli {

namespace {

/// Names and errors others chose, shown on a terminal: printable ASCII only.
std::string printable(const std::string& text) {
    std::string out;
    for (const char ch : text) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    return out;
}

std::string text_or(const std::optional<std::string>& value, const std::string& none) {
    return value ? printable(*value) : none;
}

/// "LABEL HOLDER (token N), lease expires in ..." for one elected role's lease.
std::string lease_line(const std::string& label, const std::optional<std::string>& holder,
                       const std::optional<std::int64_t>& token, const std::optional<double>& expires_in) {
    if (!holder) return label + "none has held the lease yet";
    std::string line = label + printable(*holder) + " (token " + std::to_string(token.value_or(0)) + ")";
    if (expires_in && *expires_in > 0) return line + ", lease expires in " + shown_seconds(*expires_in);
    const double expired = -expires_in.value_or(0);
    if (!std::isfinite(expired)) return line + ", lease released";
    return line + ", lease expired " + shown_seconds(expired) + " ago";
}

std::string maintainer_line(const LogStatus& s) {
    return lease_line("maintainer  ", s.maintainer_holder, s.maintainer_token, s.maintainer_expires_in_seconds);
}

/// Without a herald consumers still read everything, on their fallback timers: said, not warned.
std::string herald_line(const LogStatus& s) {
    const auto line = lease_line("herald      ", s.herald_holder, s.herald_token, s.herald_expires_in_seconds);
    return s.has_herald() ? line : line + " (consumers wake on their fallback timers)";
}

/// " on worker host:port" when the oldest transaction is a Citus worker's, else "".
std::string on_node(const LogStatus& s) {
    return s.oldest_xact_node ? " on worker " + printable(*s.oldest_xact_node) : "";
}

/// The oldest open transaction this role may see, and the xmin horizon's lag (which counts them all).
std::string oldest_transaction_line(const LogStatus& s) {
    const std::string horizon =
        "xmin horizon " + std::to_string(static_cast<long long>(s.xmin_lag_xids)) + " ids behind";
    if (!s.oldest_xact_age_seconds) return "oldest tx   none open that the schema owner may see; " + horizon;
    return "oldest tx   pid " + std::to_string(s.oldest_xact_pid.value_or(0)) + " (" +
           text_or(s.oldest_xact_user, "?") + ", " + text_or(s.oldest_xact_state, "?") + ")" + on_node(s) + " open " +
           shown_seconds(*s.oldest_xact_age_seconds) + "; " + horizon;
}

/// The groups holding back partitions past their policy: "g1 (6 partition(s)), g2 (1 partition(s))".
std::string holders_text(const LogStatus& s) {
    std::string out;
    for (const auto& h : s.held)
        out += (out.empty() ? "" : ", ") + printable(h.group) + " (" + std::to_string(h.partitions) + " partition(s))";
    return out;
}

/// The next partition retention drops. Partitions past their policy that a
/// group holds back are not "none past": they are named with the groups.
std::string next_drop_line(const LogStatus& s) {
    const std::string held =
        s.held.empty() ? "" : "; past their policy but held back by " + holders_text(s) + " (see the warning)";
    if (!s.next_drop_partition) {
        if (s.held.empty()) return "next drop   none (no partition is past its retention policy)";
        return "next drop   none until a group lets go: partitions past their policy are held back by " +
               holders_text(s) + " (see the warning)";
    }
    const std::string name = *s.next_drop_partition;
    if (s.next_drop_state == std::string("archive")) return "next drop   " + name + " once archived (due now)" + held;
    if (s.next_drop_state == std::string("due")) return "next drop   " + name + " on the maintainer's next pass" + held;
    return "next drop   " + name + " in " + shown_seconds(s.next_drop_seconds.value_or(0)) + " (" +
           text_or(s.next_drop_at, "-") + ")" + held;
}

}  // namespace

std::string shown_bytes(std::int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 5) {
        value /= 1024;
        ++unit;
    }
    std::ostringstream out;
    if (unit == 0) out << bytes << " B";
    else out << std::fixed << std::setprecision(value < 10 ? 1 : 0) << value << " " << units[unit];
    return out.str();
}

std::string shown_seconds(double seconds) {
    if (!std::isfinite(seconds)) return "-";
    const auto s = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
    std::ostringstream out;
    if (s < 60) out << s << "s";
    else if (s < 3600) out << s / 60 << "m" << (s % 60 ? std::to_string(s % 60) + "s" : "");
    else if (s < 86400) out << s / 3600 << "h" << (s % 3600 / 60 ? std::to_string(s % 3600 / 60) + "m" : "");
    else out << s / 86400 << "d" << (s % 86400 / 3600 ? std::to_string(s % 86400 / 3600) + "h" : "");
    return out.str();
}

std::vector<std::string> log_summary_lines(const LogStatus& s) {
    std::vector<std::string> lines;
    lines.push_back("size        " + shown_bytes(s.bytes) + " in " + std::to_string(s.partitions) +
                    " partition(s), keys " + shown_bytes(s.key_bytes));
    lines.push_back("oldest      " +
                    (s.oldest_event_at
                         ? *s.oldest_event_at + " (" + shown_seconds(s.oldest_event_age_seconds.value_or(0)) + " ago)"
                         : std::string("no event")));
    std::string ahead = "ahead       partitions until tx " + text_or(s.ahead_to_tx, "-") + ", " +
                        std::to_string(static_cast<long long>(s.ahead_xids)) + " ids from now";
    if (s.ahead_seconds) ahead += " (about " + shown_seconds(*s.ahead_seconds) + " at the measured rate)";
    else ahead += " (rate not measured yet)";
    lines.push_back(ahead);
    lines.push_back(next_drop_line(s));
    lines.push_back(oldest_transaction_line(s));
    lines.push_back(maintainer_line(s));
    lines.push_back(herald_line(s));
    return lines;
}

std::vector<std::string> log_warnings(const LogStatus& s) {
    std::vector<std::string> out;
    for (const auto& h : s.held)
        out.push_back("retention held back by group " + printable(h.group) + " (" + std::to_string(h.partitions) +
                      " partition(s), " + shown_bytes(h.bytes) +
                      "): it has not consumed them; `tributary group reset " + printable(h.group) +
                      "` or a policy with --drop-unconsumed lets them go");
    if (s.default_events > 0)
        out.push_back(std::string(s.default_events >= 1000 ? "1000 or more" : std::to_string(s.default_events)) +
                      " event(s) in the default partition: no partition covered their transactions (was the "
                      "maintainer away?); retention never takes them: `tributary log repartition` moves them into "
                      "partitions of their own");
    if (s.archive_failing > 0)
        out.push_back("archive failing for " + std::to_string(s.archive_failing) + " partition(s); last " +
                      text_or(s.archive_failing_partition, "-") + ": " + text_or(s.archive_error, "-"));
    if (s.oldest_xact_age_seconds && *s.oldest_xact_age_seconds > kLongTransactionSeconds)
        out.push_back("a transaction has been open for " + shown_seconds(*s.oldest_xact_age_seconds) + " (pid " +
                      std::to_string(s.oldest_xact_pid.value_or(0)) + ", user " + text_or(s.oldest_xact_user, "?") +
                      ", application '" + text_or(s.oldest_xact_application, "") + "', " +
                      text_or(s.oldest_xact_state, "?") +
                      "): it holds back every consumer group and vacuum; end it with SELECT pg_terminate_backend(" +
                      std::to_string(s.oldest_xact_pid.value_or(0)) + ");" +
                      (s.oldest_xact_node ? " on worker " + printable(*s.oldest_xact_node) : std::string()));
    if (s.oldest_prepared_age_seconds && *s.oldest_prepared_age_seconds > kLongTransactionSeconds)
        out.push_back("a two-phase commit has been prepared for " + shown_seconds(*s.oldest_prepared_age_seconds) +
                      " on worker " + text_or(s.oldest_prepared_node, "?") + " (gid '" +
                      text_or(s.oldest_prepared_gid, "?") +
                      "'): that worker's lanes wait for its COMMIT PREPARED; Citus' recovery "
                      "(citus.recover_2pc_interval) ends it, or COMMIT PREPARED / ROLLBACK PREPARED there");
    for (const auto& lane : s.unread_lanes)
        out.push_back(printable(lane) +
                      ": consumer groups and tail pass over this lane until it is readable (`tributary shard list`)");
    if (!s.has_maintainer())
        out.push_back(
            "no maintainer holds the lease: no partition is created ahead or dropped; start `tributary "
            "maintain` or a `tributary run` without --no-maintain");
    return out;
}

nlohmann::ordered_json log_status_json(const LogStatus& s) {
    auto held = nlohmann::ordered_json::array();
    for (const auto& h : s.held) held.push_back({{"group", h.group}, {"partitions", h.partitions}, {"bytes", h.bytes}});
    return {
        {"partitions", s.partitions},
        {"bytes", s.bytes},
        {"key_bytes", s.key_bytes},
        {"default_partition_events", s.default_events},
        {"oldest_event_at", nullable_json(s.oldest_event_at)},
        {"oldest_event_age_seconds", nullable_json(s.oldest_event_age_seconds)},
        {"ahead_to_tx", nullable_json(s.ahead_to_tx)},
        {"ahead_xids", s.ahead_xids},
        {"xids_per_second", nullable_json(s.xids_per_second)},
        {"ahead_seconds", nullable_json(s.ahead_seconds)},
        {"next_drop", s.next_drop_partition ? nlohmann::ordered_json{{"partition", *s.next_drop_partition},
                                                                     {"state", nullable_json(s.next_drop_state)},
                                                                     {"at", nullable_json(s.next_drop_at)},
                                                                     {"seconds", nullable_json(s.next_drop_seconds)}}
                                            : nlohmann::ordered_json()},
        {"archive_failing", s.archive_failing},
        {"archive_failing_partition", nullable_json(s.archive_failing_partition)},
        {"archive_error", nullable_json(s.archive_error)},
        {"retention_held", held},
        {"oldest_transaction", s.oldest_xact_age_seconds
                                   ? nlohmann::ordered_json{{"pid", nullable_json(s.oldest_xact_pid)},
                                                            {"user", nullable_json(s.oldest_xact_user)},
                                                            {"application", nullable_json(s.oldest_xact_application)},
                                                            {"state", nullable_json(s.oldest_xact_state)},
                                                            {"age_seconds", *s.oldest_xact_age_seconds},
                                                            {"node", nullable_json(s.oldest_xact_node)}}
                                   : nlohmann::ordered_json()},
        {"oldest_prepared_transaction", s.oldest_prepared_age_seconds
                                            ? nlohmann::ordered_json{{"gid", nullable_json(s.oldest_prepared_gid)},
                                                                     {"node", nullable_json(s.oldest_prepared_node)},
                                                                     {"age_seconds", *s.oldest_prepared_age_seconds}}
                                            : nlohmann::ordered_json()},
        {"xmin_horizon_lag_xids", s.xmin_lag_xids},
        {"maintainer",
         {{"holder", nullable_json(s.maintainer_holder)},
          {"token", nullable_json(s.maintainer_token)},
          {"expires_in_seconds", nullable_json(s.maintainer_expires_in_seconds)},
          {"holds_lease", s.has_maintainer()}}},
        {"herald",
         {{"holder", nullable_json(s.herald_holder)},
          {"token", nullable_json(s.herald_token)},
          {"expires_in_seconds", nullable_json(s.herald_expires_in_seconds)},
          {"holds_lease", s.has_herald()}}},
        {"warnings", log_warnings(s)}};
}

nlohmann::ordered_json partitions_json(const std::vector<PartitionStatus>& rows) {
    auto all = nlohmann::ordered_json::array();
    for (const auto& p : rows)
        all.push_back({{"name", p.name},
                       {"from_tx", nullable_json(p.from_tx)},
                       {"to_tx", nullable_json(p.to_tx)},
                       {"state", p.state},
                       {"bytes", p.bytes},
                       {"started_at", nullable_json(p.started_at)},
                       {"ended_at", nullable_json(p.ended_at)},
                       {"sealed_at", nullable_json(p.sealed_at)},
                       {"due_at", nullable_json(p.due_at)},
                       {"held_by", p.held_by},
                       {"archive", p.archive},
                       {"archived_at", nullable_json(p.archived_at)},
                       {"archive_failures", p.archive_failures},
                       {"archive_error", nullable_json(p.archive_error)}});
    return all;
}

void print_partitions_table(const std::vector<PartitionStatus>& rows) {
    using Row = std::vector<std::string>;
    const std::vector<bool> right = {false, true, true, false, true, false, false, false, false, false, false};
    std::vector<Row> table{
        {"PARTITION", "FROM TX", "TO TX", "STATE", "SIZE", "STARTED", "ENDED", "SEALED", "DUE", "HELD BY", "ARCHIVE"}};
    for (const auto& p : rows) {
        std::string held;
        for (const auto& g : p.held_by) held += (held.empty() ? "" : ",") + printable(g);
        std::string archive = "-";
        if (p.archived_at) archive = "archived " + *p.archived_at;
        else if (p.archive_error)
            archive = "failed x" + std::to_string(p.archive_failures) + ": " + printable(*p.archive_error);
        else if (p.archive) archive = "wanted";
        table.push_back({p.name, text_or(p.from_tx, "-"), text_or(p.to_tx, "-"), p.state, shown_bytes(p.bytes),
                         text_or(p.started_at, "-"), text_or(p.ended_at, "-"), text_or(p.sealed_at, "-"),
                         text_or(p.due_at, "-"), held.empty() ? "-" : held, archive});
    }
    print_aligned(table, right);
}

}  // namespace tributary::cli
