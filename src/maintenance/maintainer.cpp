#include "maintenance/maintainer.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.h"

namespace tributary::maintenance {

Maintainer::Maintainer(LeaseStore& store, std::vector<MaintenanceStep*> steps, std::string holder,
                       MaintainerTimings timings)
    : store_(store), steps_(std::move(steps)), holder_(std::move(holder)), timings_(timings) {}

std::optional<MaintainerLease> Maintainer::lease() const {
    if (!token_) return std::nullopt;
    return MaintainerLease{holder_, *token_};
}

bool Maintainer::hold() {
    std::optional<std::int64_t> token;
    try {
        token = store_.acquire(holder_, timings_.lease);
    } catch (const DatabaseUnavailable& e) {
        if (!unreachable_) spdlog::warn("maintainer={} cannot reach the database: {}", holder_, e.what());
        unreachable_ = true;
        if (token_) lost("the database is out of reach");
        return false;
    }
    if (unreachable_) spdlog::info("maintainer={} reaches the database again", holder_);
    unreachable_ = false;
    if (token && token_ && *token != *token_) lost("it lapsed before it was renewed");
    if (!token) {
        if (token_) lost("another maintainer took it");
        if (!seen_other_holder_) spdlog::info("maintainer={} another maintainer holds the lease", holder_);
        seen_other_holder_ = true;
        return false;
    }
    if (!token_) {
        spdlog::info("maintainer={} took the lease (token {}, lease {} ms, pass every {} ms)", holder_, *token,
                     timings_.lease.count(), timings_.interval.count());
        outcomes_.clear();  // a new tenure logs each step's first outcome again
    }
    token_ = token;
    seen_other_holder_ = false;
    return true;
}

void Maintainer::lost(const std::string& why) {
    spdlog::warn("maintainer={} lost the lease (token {}): {}; acting no more until it takes it again", holder_,
                 token_ ? *token_ : 0, why);
    token_.reset();
}

bool Maintainer::pass() {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        if (!token_) return false;
        if (i > 0 && !hold()) return false;  // renew between steps: a slow step must not cost the lease
        run_step(*steps_[i]);
    }
    return token_.has_value();
}

void Maintainer::run_step(MaintenanceStep& step) {
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

void Maintainer::note_outcome(const MaintenanceStep& step, const std::string& outcome) {
    auto& last = outcomes_[step.name()];
    if (last == outcome) return;
    last = outcome;
    if (outcome == "ok") spdlog::info("maintainer={} step={} ok", holder_, step.name());
    else
        spdlog::error("maintainer={} step={} failed (the pass goes on; tried again next pass): {}", holder_,
                      step.name(), outcome);
}

void Maintainer::release() {
    if (!token_) return;
    const MaintainerLease held{holder_, *token_};
    token_.reset();
    try {
        store_.release(held);
        spdlog::info("maintainer={} released the lease (token {})", holder_, held.token);
    } catch (const std::exception& e) {
        spdlog::warn("maintainer={} could not release the lease (token {}; it lapses on its own): {}", holder_,
                     held.token, e.what());
    }
}

void Maintainer::run(const StopSignal& stop) {
    using Clock = std::chrono::steady_clock;
    const auto check_every = std::max<std::chrono::milliseconds>(timings_.lease / 3, std::chrono::milliseconds(1));
    std::optional<Clock::time_point> next_pass;  // unset: at once, once the lease is taken
    while (!stop.stop_requested()) {
        if (hold()) {
            if (!next_pass || Clock::now() >= *next_pass) {
                pass();
                next_pass = Clock::now() + timings_.interval;
            }
        } else {
            next_pass.reset();
        }
        auto wait = Clock::duration(check_every);
        if (token_ && next_pass) wait = std::min(wait, std::max(Clock::duration::zero(), *next_pass - Clock::now()));
        stop.wait_for(wait);
    }
    release();
}

}  // namespace tributary::maintenance
