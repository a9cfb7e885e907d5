#include "backoff.h"

#include <algorithm>

namespace tributary {

std::chrono::milliseconds exponential_ceiling(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                                              int failures) {
    // Doubling past 2^30 would overflow long before any sane cap is reached.
    const int doublings = std::clamp(failures - 1, 0, 30);
    const auto ceiling = base.count() * (std::int64_t{1} << doublings);
    return std::chrono::milliseconds(std::min<std::int64_t>(ceiling, cap.count()));
}

Backoff::Backoff(BackoffPolicy policy, std::uint64_t seed) : policy_(policy), random_(seed) {}

std::chrono::milliseconds Backoff::transient(int failures) {
    const auto ceiling = exponential_ceiling(policy_.transient_base, policy_.transient_cap, failures);
    std::uniform_int_distribution<std::int64_t> pick(0, ceiling.count());
    return std::chrono::milliseconds(pick(random_));
}

std::chrono::milliseconds Backoff::failing(int failures) {
    const auto ceiling = exponential_ceiling(policy_.failing_base, policy_.failing_cap, failures);
    std::uniform_int_distribution<std::int64_t> pick(ceiling.count() / 2, ceiling.count());
    return std::chrono::milliseconds(pick(random_));
}

}  // namespace tributary
