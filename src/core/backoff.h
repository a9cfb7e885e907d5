#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace tributary {

/// How long a failing source is left alone. Exponential in the number of
/// consecutive failures, capped, with full jitter for transient trouble (so
/// that many loaders do not retry in step) and a long base for sources that
/// are wrong (they need a human, not a hammering).
struct BackoffPolicy {
    std::chrono::milliseconds transient_base{1000};
    std::chrono::milliseconds transient_cap{60000};
    std::chrono::milliseconds failing_base{60000};
    std::chrono::milliseconds failing_cap{30 * 60000};
};

class Backoff {
public:
    explicit Backoff(BackoffPolicy policy, std::uint64_t seed = std::random_device{}());

    /// Delay after the `failures`-th consecutive transient failure (1-based):
    /// uniform in [0, min(cap, base * 2^(failures-1))].
    std::chrono::milliseconds transient(int failures);
    /// Delay after the `failures`-th consecutive failure of a wrong source:
    /// in [ceiling/2, ceiling], ceiling = min(cap, base * 2^(failures-1)).
    std::chrono::milliseconds failing(int failures);

    const BackoffPolicy& policy() const noexcept { return policy_; }

private:
    BackoffPolicy policy_;
    std::mt19937_64 random_;
};

/// Capped exponential ceiling shared by the strategies above.
std::chrono::milliseconds exponential_ceiling(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                                              int failures);

}  // namespace tributary
