#include "activity_step.h"

#include <spdlog/spdlog.h>

namespace tributary::maintenance {

void ActivityStep::run(const MaintainerLease& lease) {
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    auto renewed = started;
    long long folded = 0;
    int calls = 0;
    for (;;) {
        if (renewal_.renew && Clock::now() - renewed >= renewal_.every) {
            renewal_.renew(lease);  // throws LeaseLost: what was folded is committed, the rest waits
            renewed = Clock::now();
        }
        const int n = fold_.fold(lease, settings_.chunk);
        folded += n;
        ++calls;
        if (n < settings_.chunk) break;
        if (Clock::now() - started >= settings_.budget) {
            spdlog::info("maintainer={} activity: folded {} events in {} calls, more to fold on the next pass",
                         lease.holder, folded, calls);
            return;
        }
    }
    spdlog::debug("maintainer={} activity: folded {} events", lease.holder, folded);
}

}  // namespace tributary::maintenance
