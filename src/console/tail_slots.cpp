#include "tail_slots.h"

namespace tributary::console {

TailSlot::~TailSlot() {
    if (slots_) slots_->give_back();
}

std::optional<TailSlot> TailSlots::try_take() {
    std::lock_guard<std::mutex> guard(mutex_);
    if (in_use_ >= max_) return std::nullopt;
    ++in_use_;
    return std::optional<TailSlot>(std::in_place, *this);
}

int TailSlots::in_use() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return in_use_;
}

void TailSlots::give_back() {
    std::lock_guard<std::mutex> guard(mutex_);
    --in_use_;
}

}  // namespace tributary::console
