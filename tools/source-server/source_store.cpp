#include "source_store.h"

#include <algorithm>
#include <mutex>

namespace tributary::source_server {

Source::Source(std::string name, std::int64_t backlog, std::int64_t backlog_created_us)
    : identity_(std::move(name)), backlog_(backlog), backlog_created_us_(backlog_created_us), produced_(backlog) {}

void Source::produce_until(std::int64_t target, std::int64_t now_us) {
    std::unique_lock lock(mutex_);
    std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    if (target <= have) return;
    produced_us_.resize(produced_us_.size() + static_cast<std::size_t>(target - have), now_us);
    produced_.store(target, std::memory_order_release);
}

std::int64_t Source::created_us_locked(std::int64_t id) const {
    if (id <= backlog_) return backlog_created_us_;
    return produced_us_[static_cast<std::size_t>(id - backlog_ - 1)];
}

std::vector<EventRef> Source::events_after(std::int64_t after_id, std::int64_t max) const {
    std::vector<EventRef> out;
    if (after_id < 0 || max <= 0) return out;
    std::shared_lock lock(mutex_);
    std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    if (after_id >= have) return out;
    std::int64_t last = std::min(have, after_id + max);
    out.reserve(static_cast<std::size_t>(last - after_id));
    for (std::int64_t id = after_id + 1; id <= last; ++id) out.push_back({id, created_us_locked(id)});
    return out;
}

std::vector<EventRef> Source::events_from(std::int64_t first_id, std::int64_t count, std::int64_t now_us) const {
    std::vector<EventRef> out;
    if (count <= 0) return out;
    out.reserve(static_cast<std::size_t>(count));
    std::shared_lock lock(mutex_);
    std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    for (std::int64_t id = first_id; id < first_id + count; ++id) {
        out.push_back({id, (id >= 1 && id <= have) ? created_us_locked(id) : now_us});
    }
    return out;
}

void SourceSet::add(std::unique_ptr<Source> source) {
    by_name_[source->name()] = source.get();
    sources_.push_back(std::move(source));
}

Source* SourceSet::find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace tributary::source_server
