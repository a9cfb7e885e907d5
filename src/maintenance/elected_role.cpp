#include "maintenance/elected_role.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.h"

namespace tributary::maintenance {

ElectedRole::ElectedRole(std::string role, LeaseStore& store, std::vector<MaintenanceStep*> steps, std::string holder,
                         ElectionTimings timings)
    : store_(store), steps_(std::move(steps)), role_(std::move(role)), holder_(std::move(holder)), timings_(timings) {}

std::optional<MaintainerLease> ElectedRole::lease() const {
    if (!token_) return std::nullopt;
    return MaintainerLease{holder_, *token_};
}

bool ElectedRole::hold() {
    std::optional<std::int64_t> token;
    try {
        token = store_.acquire(holder_, timings_.lease);
    } catch (const DatabaseUnavailable& e) {
        if (!unreachable_) spdlog::warn("{}={} cannot reach the database: {}", role_, holder_, e.what());
        unreachable_ = true;
        if (token_) lost("the database is out of reach");
        return false;
    }
    if (unreachable_) spdlog::info("{}={} reaches the database again", role_, holder_);
    unreachable_ = false;
    if (token && token_ && *token != *token_) lost("it lapsed before it was renewed");
    if (!token) {
        if (token_) lost("another " + role_ + " took it");
        if (!seen_other_holder_) spdlog::info("{}={} another {} holds the lease", role_, holder_, role_);
        seen_other_holder_ = true;
        return false;
    }
    if (!token_) {
        spdlog::info("{}={} took the lease (token {}, lease {} ms, pass every {} ms)", role_, holder_, *token,
                     timings_.lease.count(), timings_.interval.count());
        outcomes_.clear();  // a new tenure logs each step's first outcome again
    }
    token_ = token;
    seen_other_holder_ = false;
    return true;
}

void ElectedRole::lost(const std::string& why) {
    spdlog::warn("{}={} lost the lease (token {}): {}; acting no more until it takes it again", role_, holder_,
                 token_ ? *token_ : 0, why);
    token_.reset();
}

bool ElectedRole::pass() {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        if (!token_) return false;
        if (i > 0 && !hold()) return false;  // renew between steps: a slow step must not cost the lease
        run_step(*steps_[i]);
    }
    return token_.has_value();
}

void ElectedRole::run_step(MaintenanceStep& step) {
    try {
        step.run(MaintainerLease{holder_, *token_});
        note_outcome(step, "ok");
    } catch (const LeaseLost& e) {
        lost(std::string("step ") + step.name() + ": " + e.what());
    } catch (const MaintainerForbidden&) {
        throw;
    } catch (const std::exception& e) {
        note_outcome(step, e.what());
    }
}

void ElectedRole::note_outcome(const MaintenanceStep& step, const std::string& outcome) {
    auto& last = outcomes_[step.name()];
    if (last == outcome) return;
    last = outcome;
    if (outcome == "ok") spdlog::info("{}={} step={} ok", role_, holder_, step.name());
    else
        spdlog::error("{}={} step={} failed (the pass goes on; tried again next pass): {}", role_, holder_, step.name(),
                      outcome);
}

void ElectedRole::release() {
    if (!token_) return;
    const MaintainerLease held{holder_, *token_};
    token_.reset();
    try {
        store_.release(held);
        spdlog::info("{}={} released the lease (token {})", role_, holder_, held.token);
    } catch (const std::exception& e) {
        spdlog::warn("{}={} could not release the lease (token {}; it lapses on its own): {}", role_, holder_,
                     held.token, e.what());
    }
}

void ElectedRole::run(const StopSignal& stop) {
    using Clock = std::chrono::steady_clock;
    const auto check_every = std::max<std::chrono::milliseconds>(timings_.lease / 3, std::chrono::milliseconds(1));
    auto next_hold = Clock::now();
    auto next_pass = Clock::time_point::min();  // at once, once the lease is taken
    while (!stop.stop_requested()) {
        if (Clock::now() >= next_hold) {
            // Renewed every lease/3 only, however often the passes run (the herald's, every few ms).
            if (!hold()) next_pass = Clock::time_point::min();
            next_hold = Clock::now() + check_every;
        }
        if (token_ && Clock::now() >= next_pass) {
            pass();
            next_pass = Clock::now() + timings_.interval;
        }
        const auto until = token_ ? std::min(next_hold, next_pass) : next_hold;
        stop.wait_for(std::max(Clock::duration::zero(), until - Clock::now()));
    }
    release();
}

}  // namespace tributary::maintenance
