#pragma once

#include <mutex>
#include <optional>

namespace tributary::console {

class TailSlots;

/// A stream's hold on one of TailSlots' places, given back when destroyed.
class TailSlot {
public:
    explicit TailSlot(TailSlots& slots) : slots_(&slots) {}
    TailSlot(TailSlot&& other) noexcept : slots_(other.slots_) { other.slots_ = nullptr; }
    TailSlot& operator=(TailSlot&&) = delete;
    TailSlot(const TailSlot&) = delete;
    TailSlot& operator=(const TailSlot&) = delete;
    ~TailSlot();

private:
    TailSlots* slots_;
};

/// At most `max` live tails at once: each holds a thread of the HTTP server
/// and a database session for as long as the page stays open.
class TailSlots {
public:
    explicit TailSlots(int max) : max_(max) {}

    /// A place, or nothing when all are taken.
    std::optional<TailSlot> try_take();
    int in_use() const;

private:
    friend class TailSlot;
    void give_back();

    const int max_;
    mutable std::mutex mutex_;
    int in_use_ = 0;
};

}  // namespace tributary::console
