#include "hostile.h"

#include <algorithm>
#include <thread>

#include "processes.h"
#include "report.h"
#include "supervisor.h"

namespace tributary::crash {

namespace {

using Clock = std::chrono::steady_clock;

long long realtime_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// A source that was asked but whose status does not show it yet gets this
/// many one-second re-checks: the request may still be in flight, or its
/// loader may have died before recording it and the gate lease must expire.
constexpr int kRechecks = 8;

}  // namespace

HostileEpisodes::HostileEpisodes(Sources& sources, Tally& tally, const Supervisor& supervisor,
                                 std::string tributary_bin, std::string db_url,
                                 std::chrono::milliseconds source_timeout)
    : sources_(sources),
      tally_(tally),
      supervisor_(supervisor),
      tributary_bin_(std::move(tributary_bin)),
      db_url_(std::move(db_url)),
      source_timeout_(source_timeout) {}

std::optional<std::map<std::string, nlohmann::json>> HostileEpisodes::status() const {
    try {
        const auto done = run_to_end({tributary_bin_, "--db", db_url_, "status", "--json"}, std::chrono::seconds(30));
        if (done.code != 0) return std::nullopt;  // e.g. the database is restarting
        std::map<std::string, nlohmann::json> by_name;
        for (auto& row : nlohmann::json::parse(done.out)) by_name[row.at("name").get<std::string>()] = row;
        return by_name;
    } catch (const std::exception& e) {
        say(std::string("status failed: ") + e.what());
        return std::nullopt;
    }
}

bool HostileEpisodes::begin(std::mt19937_64& random, bool long_backoff_ok, std::chrono::milliseconds duration) {
    const auto rows = status();
    if (!rows) return false;
    std::vector<std::string> free;
    for (const auto& name : sources_.hostile_capable()) {
        const bool busy =
            std::any_of(episodes_.begin(), episodes_.end(), [&](const Episode& e) { return e.source == name; });
        const auto it = rows->find(name);
        if (busy || it == rows->end()) continue;
        if (it->second.at("state") == "ok" && it->second.at("consecutive_failures") == 0) free.push_back(name);
    }
    std::vector<HostileMode> modes;
    for (const auto& mode : hostile_modes())
        if (long_backoff_ok || !mode.long_backoff) modes.push_back(mode);
    if (free.empty() || modes.empty()) return false;

    Episode episode;
    episode.source = free[std::uniform_int_distribution<std::size_t>(0, free.size() - 1)(random)];
    episode.mode = modes[std::uniform_int_distribution<std::size_t>(0, modes.size() - 1)(random)];
    episode.began_us = realtime_us();
    episode.began_s = elapsed_s();
    episode.end_at = Clock::now() + duration;
    sources_.set_fault(episode.source, episode.mode.mode);
    tally_.fault("hostile " + episode.mode.mode);
    say("hostile: " + episode.source + " plays " + episode.mode.mode + " for " +
        std::to_string(duration.count() / 1000.0).substr(0, 4) + " s");
    episodes_.push_back(std::move(episode));
    ++active_;
    return true;
}

HostileEpisodes::Verdict HostileEpisodes::check(Episode& episode, std::string& evidence) {
    const long long now_us = realtime_us();
    const long long margin_us = (source_timeout_.count() + 1500) * 1000;
    long long first_arrival = 0;
    bool asked = false, asking = false;
    for (const auto& r : sources_.requests(episode.source)) {
        if (r.at("fault") != episode.mode.mode) continue;
        const long long arrival = r.at("arrival_us").get<long long>();
        if (arrival < episode.began_us - 1000000) continue;  // an earlier episode of the same mode
        if (!first_arrival || arrival < first_arrival) first_arrival = arrival;
        (arrival <= now_us - margin_us ? asked : asking) = true;
    }
    if (!asked) return asking && episode.rechecks < kRechecks ? Verdict::retry : Verdict::not_asked;

    const auto rows = status();
    if (!rows) return episode.rechecks < kRechecks ? Verdict::retry : Verdict::inconclusive;
    const auto it = rows->find(episode.source);
    if (it == rows->end()) return Verdict::fail;
    const auto& row = it->second;
    const std::string error = row.at("last_error").is_string() ? row.at("last_error").get<std::string>() : "";
    const double since_error =
        row.at("seconds_since_last_error").is_number() ? row.at("seconds_since_last_error").get<double>() : 1e9;
    // The error must be this episode's, not one left from an earlier episode.
    const bool fresh = since_error <= elapsed_s() - episode.began_s + 1.0;
    const bool named = std::any_of(episode.mode.causes.begin(), episode.mode.causes.end(),
                                   [&](const std::string& cause) { return error.find(cause) != std::string::npos; });
    if (row.at("state") == episode.mode.state && fresh && named) return Verdict::pass;

    evidence = episode.source + " played " + episode.mode.mode + " since " + std::to_string(episode.began_s) +
               " s and was asked; status shows " + row.dump();
    if (episode.rechecks < kRechecks) return Verdict::retry;
    // The loader that made the request may have died (or been paused, or lost
    // its database) before writing it down; then status cannot know.
    const double first_arrival_s = episode.began_s + (first_arrival - episode.began_us) / 1e6;
    if (tally_.last_disruption_s() >= first_arrival_s - 1.0 || supervisor_.paused_count().value_or(0) > 0)
        return Verdict::inconclusive;
    return Verdict::fail;
}

void HostileEpisodes::finish(const Episode& episode, Verdict verdict, const std::string& evidence) {
    sources_.set_fault(episode.source, "none");
    --active_;
    const char* name = verdict == Verdict::pass        ? "cause shown in status"
                       : verdict == Verdict::not_asked ? "not asked during the episode"
                       : verdict == Verdict::fail      ? "NO CAUSE IN STATUS"
                                                       : "inconclusive (a loader was disrupted meanwhile)";
    tally_.observe(std::string("hostile episode: ") + name);
    say("healed " + episode.source + " (" + episode.mode.mode + "): " + name);
    if (verdict == Verdict::fail) tally_.anomaly("hostile_without_cause", evidence);
    if (verdict == Verdict::inconclusive && !evidence.empty()) say("  " + evidence);
}

void HostileEpisodes::tick() {
    const auto now = Clock::now();
    for (auto it = episodes_.begin(); it != episodes_.end();) {
        if (now < it->end_at) {
            ++it;
            continue;
        }
        std::string evidence;
        const Verdict verdict = check(*it, evidence);
        if (verdict == Verdict::retry) {
            ++it->rechecks;
            it->end_at = now + std::chrono::seconds(1);
            ++it;
            continue;
        }
        finish(*it, verdict, evidence);
        it = episodes_.erase(it);
    }
}

void HostileEpisodes::end_all() {
    for (auto& episode : episodes_) episode.end_at = Clock::now();
    while (!episodes_.empty()) {
        tick();
        if (!episodes_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

}  // namespace tributary::crash
