// `tributary consume` through tributary-fault-proxy (tools/fault-proxy): the
// connection cut right after a consumer_next that carried an ack committed,
// so the ack is done but the consumer never hears it.

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <thread>

#include <httplib.h>

#include "support/consume_rig.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// The fault proxy in front of the test cluster.
class FaultProxy {
public:
    explicit FaultProxy(int target_port)
        : process_({TRIBUTARY_FAULT_PROXY_BIN, "--listen-port", "0", "--target-port", std::to_string(target_port),
                    "--control-port", "0"}) {
        const auto line = process_.first_line(10s);
        std::smatch m;
        // "listening on 127.0.0.1:LPORT control http://127.0.0.1:CPORT"
        REQUIRE(std::regex_search(line, m, std::regex(R"(listening on [0-9.]+:([0-9]+) control (http://\S+))")));
        listen_port_ = std::stoi(m[1]);
        control_url_ = m[2];
    }
    int listen_port() const { return listen_port_; }
    const std::string& control_url() const { return control_url_; }

private:
    ChildProcess process_;
    int listen_port_ = 0;
    std::string control_url_;
};

int port_of(const std::string& url) {
    std::smatch m;
    REQUIRE(std::regex_search(url, m, std::regex(R"(:([0-9]+)/)")));
    return std::stoi(m[1]);
}

std::string with_port(const std::string& url, int port) {
    return std::regex_replace(url, std::regex(R"(:[0-9]+/)"), ":" + std::to_string(port) + "/");
}

}  // namespace

TEST_CASE("consume: a consumer_next whose reply is lost after it acked counts the ack once and loses nothing",
          "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"lr.one"});
    rig.add_events("lr.one", 3000);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning", "--lease", "2s"});
    FaultProxy proxy(port_of(rig.url()));
    // The first batch's handler arms the proxy: the next consumer_next, which
    // carries that batch's ack, commits and then loses its reply.
    const std::string armed = rig.path("armed");
    const std::string handler = "cat >> " + rig.path("seen") + "; if [ ! -e " + armed + " ]; then touch " + armed +
                                "; curl -sf -X POST '" + proxy.control_url() +
                                "/cut-after-commit?count=1&statement=tributary_consumer_next' > /dev/null; fi";
    const auto first =
        run_tributary(with_port(rig.url(), proxy.listen_port()), {"consume", "g", "--until-idle", "--exec", handler});
    // The retry's ack was refused (the lost try had acked) within the lease: acked, not lost.
    CHECK(first.err.find("settled it") != std::string::npos);
    CHECK(first.err.find("stopped: 2 batches acked (2000 events), 0 failed, 0 lost") != std::string::npos);
    // The batch the lost try leased was never seen: it waits for its lease.
    CHECK(rig.db().scalar("SELECT count(*) FROM tributary.consumer_batches") == "1");
    std::this_thread::sleep_for(2500ms);
    const auto second = run_tributary(rig.url(), {"consume", "g", "--until-idle", "--exec", handler});
    CHECK(second.err.find("stopped: 1 batches acked (1000 events), 0 failed, 0 lost") != std::string::npos);
    CHECK(rig.db().scalar("SELECT count(*) FROM tributary.consumer_batches") == "0");
    const auto counts = rig.seq_counts("seen");
    CHECK(counts.size() == 3000);
    CHECK(std::all_of(counts.begin(), counts.end(), [](const auto& c) { return c.second == 1; }));
}
