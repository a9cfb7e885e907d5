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

double drain(const Sources& sources, const Cluster& cluster, Tally& tally, std::chrono::seconds timeout,
             const std::string& tributary_bin) {
    const double began = elapsed_s();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    say("draining: waiting until every cursor reaches the end of its source");
    std::string last;
    double last_said = began;
    for (;;) {
        bool done = false;
        try {
            last = behind(sources, cluster, done);
        } catch (const std::exception& e) {
            last = std::string(" (cannot read the cursors: ") + e.what() + ")";
        }
        if (done) break;
        if (interrupted()) {
            say("interrupted: drain abandoned");
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            std::string status;
            try {
                status = run_to_end({tributary_bin, "--db", cluster.url(), "status"}, std::chrono::seconds(30)).out;
            } catch (const std::exception& e) {
                status = e.what();
            }
            tally.anomaly("drain_timeout", "after " + std::to_string(timeout.count()) +
                                               " s, behind (cursor/produced):" + last + "\nstatus:\n" + status);
            break;
        }
        if (elapsed_s() - last_said >= 10) {
            say("still draining:" + last);
            last_said = elapsed_s();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    const double took = elapsed_s() - began;
    say("drain took " + std::to_string(took).substr(0, 5) + " s");
    return took;
}

}  // namespace tributary::crash
