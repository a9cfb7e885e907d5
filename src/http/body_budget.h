#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "core/stop_signal.h"

namespace tributary {

/// The bytes of response bodies that all the workers of one process may hold
/// at once (`run --max-body-bytes-in-flight`), so that N workers cannot each
/// hold a maximal body: without it, memory grows with the number of workers
/// times the body limit, whatever the limits say of one source. Thread-safe.
class BodyBudget {
public:
    explicit BodyBudget(std::size_t bytes) : total_(bytes), free_(bytes) {}

    BodyBudget(const BodyBudget&) = delete;
    BodyBudget& operator=(const BodyBudget&) = delete;

    std::size_t total() const { return total_; }

    /// Takes `bytes` if they are free now.
    bool try_take(std::size_t bytes);
    /// Takes `bytes`, waiting until others give enough back; false when
    /// `deadline` passes or a stop is requested first. Only a caller that
    /// holds none of the budget may wait: two that each hold part and wait
    /// for more could wait for each other for ever.
    bool take(std::size_t bytes, std::chrono::steady_clock::time_point deadline, const StopSignal& stop);
    void give_back(std::size_t bytes);

private:
    const std::size_t total_;
    std::size_t free_;
    std::mutex mutex_;
    std::condition_variable freed_;
};

/// The part of a BodyBudget that one response holds: the capacity of its
/// body while it arrives, then what its kept payloads take until the batch
/// is dropped. Gives it all back when destroyed. Without a budget (null), it
/// only counts.
class BodyAllowance {
public:
    explicit BodyAllowance(BodyBudget* budget = nullptr) : budget_(budget) {}
    BodyAllowance(BodyAllowance&& other) noexcept : budget_(other.budget_), held_(other.held_) { other.held_ = 0; }
    BodyAllowance& operator=(BodyAllowance&&) = delete;
    BodyAllowance(const BodyAllowance&) = delete;
    ~BodyAllowance() { shrink_to(0); }

    std::size_t held() const { return held_; }

    /// Holds at least `bytes`: waits for them when nothing is held yet (see
    /// BodyBudget::take), else takes them only if they are free now.
    bool grow_to(std::size_t bytes, std::chrono::steady_clock::time_point deadline, const StopSignal& stop);
    void shrink_to(std::size_t bytes);

private:
    BodyBudget* budget_;
    std::size_t held_ = 0;
};

}  // namespace tributary
