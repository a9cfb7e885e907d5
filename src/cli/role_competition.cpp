#include "role_competition.h"

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "maintenance/lease_store.h"

namespace tributary::cli {

void compete_until_stopped(const std::string& role, std::chrono::milliseconds retry, const StopSignal& stop,
                           const std::function<void()>& take_part,
                           const std::function<void(const std::exception&)>& forbidden) {
    while (!stop.stop_requested()) {
        try {
            take_part();
            return;
        } catch (const maintenance::MaintainerForbidden& e) {
            forbidden(e);
            return;
        } catch (const DatabaseUnavailable& e) {
            // An outage, not a fault of the role: it takes part again once the database answers.
            spdlog::warn("{}: cannot reach the database, trying again in {} ms: {}", role, retry.count(), e.what());
            stop.wait_for(retry);
        } catch (const std::exception& e) {
            spdlog::error("{}: failed, trying again in {} ms: {}", role, retry.count(), e.what());
            stop.wait_for(retry);
        }
    }
}

}  // namespace tributary::cli
