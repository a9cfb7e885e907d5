#include "live_group_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "live_consumers.h"

namespace tributary::crash {

namespace {

/// An event of the log: where it comes in the log's order, and its source.
struct LogEvent {
    std::size_t position;
    int source_id;
    std::string source;
};

/// One event as a consumer was handed it. `when` orders handings: the
/// batch's stamp, then its file and line (exact within a file); for a note
/// of a batch in hand, the stamp, then past every file, then its place in the log.
struct Handing {
    std::tuple<long long, std::size_t, std::size_t> when;
    int delivery;
    std::size_t file;
};

std::unordered_map<long long, LogEvent> read_log(pqxx::connection& c, long& events) {
    std::unordered_map<long long, LogEvent> log;
    pqxx::nontransaction tx(c);
    for (const auto& row : tx.exec("SELECT e.seq, e.source_id, s.name FROM tributary.events e"
                                   "  JOIN tributary.sources s ON s.id = e.source_id ORDER BY e.tx_id, e.seq"))
        log.emplace(row[0].as<long long>(), LogEvent{log.size(), row[1].as<int>(), row[2].c_str()});
    events = static_cast<long>(log.size());
    return log;
}

/// The records, one file per consumer incarnation, in name order.
std::vector<std::filesystem::path> record_files(const std::string& record_dir) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(record_dir))
        if (entry.path().extension() == ".ndjson") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

class RecordReader {
public:
    RecordReader(const std::unordered_map<long long, LogEvent>& log, CheckReport& report)
        : log_(log), report_(report) {}

    /// Every complete line of one file. A last line without its newline is
    /// the batch its command was writing when its consumer was killed: left
    /// out (the batch was never acked, so it comes again).
    void read(const std::filesystem::path& path, std::size_t file) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream whole;
        whole << in.rdbuf();
        const std::string text = whole.str();
        const std::string name = path.filename().string();
        long long stamp = -1;
        std::size_t line_no = 0;
        for (std::size_t begin = 0; begin < text.size(); ++line_no) {
            const auto end = text.find('\n', begin);
            if (end == std::string::npos) {
                ++partial_lines_;
                break;
            }
            const std::string line = text.substr(begin, end - begin);
            begin = end + 1;
            if (!line.empty() && line[0] == '@') {
                stamp = std::stoll(line.substr(1));
                ++batches_;
                continue;
            }
            event(line, name + " line " + std::to_string(line_no + 1), stamp, file, line_no);
        }
    }

    const std::unordered_map<long long, std::vector<Handing>>& handed() const { return handed_; }
    long lines() const { return lines_; }
    long batches() const { return batches_; }
    long partial_lines() const { return partial_lines_; }

private:
    void event(const std::string& line, const std::string& where, long long stamp, std::size_t file,
               std::size_t line_no) {
        ++lines_;
        long long seq = 0;
        std::string source;
        int delivery = 0;
        try {
            const auto event = nlohmann::json::parse(line);
            seq = event.at("seq").get<long long>();
            source = event.at("source").get<std::string>();
            delivery = event.at("delivery").get<int>();
        } catch (const std::exception& e) {
            return count_anomaly(report_, "live_group_bad_record", where + ": not an event: " + line.substr(0, 200));
        }
        if (stamp < 0)
            return count_anomaly(report_, "live_group_bad_record", where + ": an event before any stamp line");
        const auto it = log_.find(seq);
        if (it == log_.end())
            return count_anomaly(report_, "live_group_bad_record",
                                 where + ": seq " + std::to_string(seq) + " handed, but the log holds no such event");
        if (it->second.source != source)
            return count_anomaly(report_, "live_group_bad_record",
                                 where + ": seq " + std::to_string(seq) + " handed as source " + source +
                                     ", but it is " + it->second.source + "'s");
        handed_[seq].push_back({{stamp, file, line_no}, delivery, file});
    }

    const std::unordered_map<long long, LogEvent>& log_;
    CheckReport& report_;
    std::unordered_map<long long, std::vector<Handing>> handed_;
    long lines_ = 0, batches_ = 0, partial_lines_ = 0;
};

/// The notes of batches a consumer held when it was SIGSTOPped
/// (note_batches_in_hand): for each seq, the earliest such note, as a
/// handing at the batch's first lease ("leased") when it is a first
/// delivery, else no later than the note's stamp (file: past the record
/// files). The lease time matters when a batch's answer was lost (a cut
/// connection): its consumer read on without it, and the note finds it
/// seconds after the later events it was handed before.
/// A note's events share its stamp; a batch is handed in log order, so
/// they are ordered by their places in the log.
std::unordered_map<long long, Handing> read_in_hand_notes(const std::string& record_dir,
                                                          const std::unordered_map<long long, LogEvent>& log,
                                                          std::size_t files) {
    std::unordered_map<long long, Handing> notes;
    std::ifstream in(record_dir + "/" + kInHandNotes);
    for (std::string line; std::getline(in, line);) {
        const auto note = nlohmann::json::parse(line);
        const auto leased = note.value("leased", nlohmann::json());
        const auto stamp = leased.is_number() ? std::min(leased.get<long long>(), note.at("stamp").get<long long>())
                                              : note.at("stamp").get<long long>();
        const auto delivery = note.at("delivery").get<int>();
        for (const auto& element : note.at("seqs")) {
            const auto seq = element.get<long long>();
            const auto event = log.find(seq);
            if (event == log.end()) continue;  // not in the log: the records' check says so if handed
            const Handing handing{{stamp, files, event->second.position}, delivery, files};
            const auto [it, fresh] = notes.emplace(seq, handing);
            if (!fresh && handing.when < it->second.when) it->second = handing;
        }
    }
    return notes;
}

/// For each source, its events ordered by their first delivery must come in
/// the log's order. Counts descents: one misplaced event counts once. An
/// event first recorded at a delivery > 1 had its first delivery go to a
/// consumer that died before its command recorded it, at a moment no record
/// tells: it is left out. (It is no anomaly that it comes after later
/// events: a consumer restarted after a kill -9 goes on with its lane's
/// fresh events while the batch its previous incarnation held waits for its
/// lease to run out, and is then redelivered.)
/// An event a consumer held when SIGSTOPped was handed no later than the
/// note that says so, though it records it only once resumed.
void check_first_deliveries(CheckReport& report, const std::unordered_map<long long, LogEvent>& log,
                            const std::unordered_map<long long, std::vector<Handing>>& handed,
                            const std::unordered_map<long long, Handing>& in_hand,
                            const std::vector<std::filesystem::path>& files) {
    struct First {
        Handing handing;
        std::size_t position;
        long long seq;
    };
    std::map<int, std::vector<First>> by_source;
    for (const auto& [seq, handings] : handed) {
        Handing first = *std::min_element(handings.begin(), handings.end(),
                                          [](const Handing& a, const Handing& b) { return a.when < b.when; });
        const auto noted = in_hand.find(seq);
        if (noted != in_hand.end() && noted->second.when < first.when) first = noted->second;
        if (first.delivery > 1) continue;
        const auto& event = log.at(seq);
        by_source[event.source_id].push_back({first, event.position, seq});
    }
    const auto describe = [&](const First& f) {
        const std::string where =
            f.handing.file < files.size() ? files[f.handing.file].filename().string() : std::string(kInHandNotes);
        return "seq " + std::to_string(f.seq) + " (" + where + ", stamp " +
               std::to_string(std::get<0>(f.handing.when)) + ", delivery " + std::to_string(f.handing.delivery) + ")";
    };
    for (auto& [source_id, firsts] : by_source) {
        std::sort(firsts.begin(), firsts.end(),
                  [](const First& a, const First& b) { return a.handing.when < b.handing.when; });
        for (std::size_t i = 1; i < firsts.size(); ++i)
            if (firsts[i].position < firsts[i - 1].position)
                count_anomaly(report, "live_group_out_of_order",
                              "source " + log.at(firsts[i].seq).source + ": " + describe(firsts[i]) +
                                  " first handed after " + describe(firsts[i - 1]) +
                                  ", which comes later in (tx_id, seq) order");
    }
}

}  // namespace

LiveGroupCheck check_live_group(const std::string& db_url, const std::string& record_dir) {
    LiveGroupCheck out;
    auto& report = out.report;
    for (const char* klass :
         {"live_group_skipped", "live_group_out_of_order", "live_group_dead_letters", "live_group_bad_record"})
        report.counts[klass] = 0;
    pqxx::connection c(db_url);
    const auto log = read_log(c, report.events_checked);
    {
        pqxx::nontransaction tx(c);
        const auto dead = tx.exec_params1(
            "SELECT count(*), min(seq), min(last_error) FROM tributary.dead_letters WHERE group_name = $1",
            std::string(kLiveGroup));
        if (const long n = dead[0].as<long>())
            count_anomaly(
                report, "live_group_dead_letters",
                std::to_string(n) + " events dead-lettered, the first seq " + dead[1].c_str() + ": " + dead[2].c_str(),
                n);
    }

    const auto files = record_files(record_dir);
    RecordReader reader(log, report);
    for (std::size_t i = 0; i < files.size(); ++i) reader.read(files[i], i);
    const auto& handed = reader.handed();
    report.events_stored = static_cast<long>(handed.size());

    long skipped = 0;
    long long first_skipped = -1;
    std::size_t first_skipped_position = 0;
    for (const auto& [seq, event] : log)
        if (!handed.count(seq) && (!skipped++ || event.position < first_skipped_position)) {
            first_skipped = seq;
            first_skipped_position = event.position;
        }
    if (skipped)
        count_anomaly(report, "live_group_skipped",
                      std::to_string(skipped) + " of " + std::to_string(log.size()) +
                          " events never handed to any consumer, the first in log order seq " +
                          std::to_string(first_skipped),
                      skipped);
    const auto in_hand = read_in_hand_notes(record_dir, log, files.size());
    check_first_deliveries(report, log, handed, in_hand, files);

    long handed_again = 0, first_seen_redelivered = 0;
    for (const auto& [seq, handings] : handed) {
        handed_again += static_cast<long>(handings.size()) - 1;
        const auto first = std::min_element(handings.begin(), handings.end(),
                                            [](const Handing& a, const Handing& b) { return a.when < b.when; });
        first_seen_redelivered += first->delivery > 1;
    }
    out.figures.push_back("live group " + std::string(kLiveGroup) + ": " + std::to_string(reader.batches()) +
                          " batches in " + std::to_string(files.size()) + " consumer incarnations' records, " +
                          std::to_string(reader.lines()) + " events handed, " + std::to_string(handed.size()) +
                          " distinct of " + std::to_string(log.size()) + " in the log; redeliveries " +
                          std::to_string(handed_again) +
                          " (events handed again after a consumer died or lost its "
                          "lease before its ack), " +
                          std::to_string(first_seen_redelivered) +
                          " first recorded at a delivery > 1 (their first delivery's consumer died before its "
                          "command recorded it: left out of the order check), " +
                          std::to_string(reader.partial_lines()) + " partial last line(s) left out, " +
                          std::to_string(in_hand.size()) + " events in hand when their consumer was SIGSTOPped");
    return out;
}

}  // namespace tributary::crash
