#include <iostream>
#include <optional>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "core/errors.h"
#include "core/idle_pause.h"
#include "core/outage_log.h"
#include "core/stop_signal.h"
#include "flag_checks.h"
#include "nullable_json.h"
#include "postgres/control_channel.h"
#include "postgres/hint_channel.h"
#include "postgres/postgres_log_reader.h"
#include "postgres/postgres_session.h"
#include "raw_json.h"
#include "session_pooling.h"
#include "signal_watcher.h"

namespace tributary::cli {

namespace {

constexpr int kReadSize = 1000;

struct TailOptions {
    std::string pattern = ">";
    std::string from;  ///< empty: end with --follow, else beginning
    bool follow = false;
    bool poll_only = false;
};

std::string ndjson_line(const postgres::PositionedEvent& e) {
    const nlohmann::ordered_json fields = {{"seq", e.position.seq},
                                           {"source", e.source},
                                           {"event_id", nullable_json(e.event_id)},
                                           {"event_key", e.event_key}};
    std::string line = with_raw_member(fields, "payload", e.payload);
    line.pop_back();
    return line + ",\"loaded_at\":" + nlohmann::json(e.loaded_at).dump() + "}\n";
}

/// Prints `events`; false when stdout is gone (e.g. `| head` ended).
bool print(const std::vector<postgres::PositionedEvent>& events) {
    for (const auto& e : events) std::cout << ndjson_line(e);
    std::cout.flush();
    return static_cast<bool>(std::cout);
}

int tail(const GlobalOptions& global, const TailOptions& options) {
    StopSignal stop;
    SignalWatcher signals(stop);
    // Behind a pooler in transaction mode: plain statements, and no LISTEN (session_pooling.h).
    const auto found = probe_and_log(global.database_url());
    if (found.keeping == postgres::SessionKeeping::shared && options.follow && !options.poll_only)
        throw SharedSessionsRefused(shared_sessions_refusal(global.database_url(),
                                                            {"tail --follow", "LISTEN for new events"}, found.evidence,
                                                            "add --poll-only, which works through such a pooler"));
    postgres::PostgresSession session(global.database_url(), found.keeping);
    postgres::PostgresLogReader reader(session);
    const std::string from = !options.from.empty() ? options.from : options.follow ? "end" : "beginning";
    // The API names what it refused (a position, a pattern); the message names the flag too.
    const std::vector<CarriedBy> flags = {{"invalid pattern", "--pattern"}, {"invalid position", "--from"}};
    // On Citus a position per lane (docs/citus.md): read() moves it on.
    auto position = naming_the_flag(flags, [&] { return reader.position(from); });
    OutageLog outages("tail pattern=" + options.pattern);
    // --follow waits for the loaders' commit hints, with a 5 s fallback;
    // --poll-only polls, 50 ms doubling to 1 s.
    std::optional<postgres::HintChannel> hints;
    if (options.follow && !options.poll_only)
        hints.emplace(global.database_url(),
                      postgres::HintChannel::Options{{postgres::kEventsChannel}, postgres::kEventsWakeWindow}, stop);
    IdlePause idle(std::chrono::milliseconds(50), std::chrono::milliseconds(hints ? 5000 : 1000));
    IdlePause outage(std::chrono::milliseconds(500), std::chrono::milliseconds(10000));
    while (!stop.stop_requested()) {
        std::vector<postgres::PositionedEvent> events;
        try {
            events = naming_the_flag(flags, [&] { return reader.read(options.pattern, position, kReadSize); });
            outages.up();
            outage.reset();
        } catch (const DatabaseUnavailable& e) {
            if (!options.follow) throw;
            outages.down(e.what());
            stop.wait_for(outage.next());
            continue;
        }
        if (!events.empty() && !print(events)) return 0;
        if (events.size() == static_cast<std::size_t>(kReadSize)) {
            idle.reset();
            continue;
        }
        // Caught up with the watermark.
        if (!options.follow) break;
        if (hints) hints->wait(idle.next());
        else stop.wait_for(idle.next());
        if (!events.empty()) idle.reset();
    }
    return 0;
}

}  // namespace

void add_tail_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand("tail", "Print committed events as NDJSON, without a group (for people and jq)");
    auto options = std::make_shared<TailOptions>();
    cmd->add_option("--pattern", options->pattern, "source names, as for groups ('orders.*', 'orders.>')")
        ->capture_default_str();
    cmd->add_option("--from", options->from,
                    "beginning, end or a timestamp (default: end with --follow, else beginning)");
    cmd->add_flag("--follow,-f", options->follow, "keep printing new events until stopped");
    cmd->add_flag("--poll-only", options->poll_only, "with --follow: no LISTEN, poll every 50 ms doubling to 1 s");
    cmd->callback([&global, &action, options] { action = [&global, options] { return tail(global, *options); }; });
}

}  // namespace tributary::cli
