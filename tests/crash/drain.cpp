#include "drain.h"

#include <map>
#include <string>
#include <thread>

#include "cluster.h"
#include "cursor_progress.h"
#include "processes.h"
#include "report.h"
#include "run_options.h"
#include "sources.h"

namespace tributary::crash {

namespace {

/// Sources not yet drained: "name cursor/produced", empty when all are.
std::string behind(const Sources& sources, const Cluster& cluster, bool& all_done) {
    all_done = false;
    const auto produced = sources.produced();
    auto cursor = cursor_progress(cluster);
    std::string out;
    for (const auto& name : sources.all()) {
        const long p = produced.at(name);
        if (p < sources.plan().max_events || cursor[name] != p)
            out += " " + name + " " + std::to_string(cursor[name]) + "/" + std::to_string(p);
    }
    all_done = out.empty();
    return out;
}

}  // namespace

double wait_drained(const std::string& what, Tally& tally, std::chrono::seconds timeout,
                    const std::function<DrainLeft()>& left,
                    const std::function<std::string(const std::string&)>& timeout_evidence) {
    const double began = elapsed_s();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    double last_said = began;
    for (;;) {
        const auto now = left();
        if (now.done) break;
        if (interrupted()) {
            say("interrupted: " + what + " abandoned");
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            tally.anomaly("drain_timeout", timeout_evidence(now.left));
            break;
        }
        if (elapsed_s() - last_said >= 10) {
            say(what + " still going: " + now.left);
            last_said = elapsed_s();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    const double took = elapsed_s() - began;
    say(what + " took " + std::to_string(took).substr(0, 5) + " s");
    return took;
}

double drain(const Sources& sources, const Cluster& cluster, Tally& tally, std::chrono::seconds timeout,
             const std::string& tributary_bin) {
    say("draining: waiting until every cursor reaches the end of its source");
    return wait_drained(
        "drain", tally, timeout,
        [&] {
            DrainLeft now;
            try {
                now.left = behind(sources, cluster, now.done);
            } catch (const std::exception& e) {
                now.left = std::string(" (cannot read the cursors: ") + e.what() + ")";
            }
            return now;
        },
        [&](const std::string& last) {
            std::string status;
            try {
                status = run_to_end({tributary_bin, "--db", cluster.url(), "status"}, std::chrono::seconds(30)).out;
            } catch (const std::exception& e) {
                status = e.what();
            }
            return "after " + std::to_string(timeout.count()) + " s, behind (cursor/produced):" + last + "\nstatus:\n" +
                   status;
        });
}

}  // namespace tributary::crash
