#include "source_store.h"

#include <algorithm>
#include <mutex>

namespace tributary::source_server {
namespace {

constexpr std::int64_t kMaxLateMs = 2000;  // fault `late`: up to 2 s in the past

// How late event `id` is when produced in fault mode `late`: 0..2000 ms, fixed per id so
// that every run and every reader sees the same times.
std::uint16_t lateness_ms(std::int64_t id) {
    std::uint64_t z = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::uint16_t>((z ^ (z >> 29)) % (kMaxLateMs + 1));
}

}  // namespace

Source::Source(std::string name, std::int64_t backlog, std::int64_t backlog_created_us)
    : identity_(std::move(name)),
      backlog_(backlog),
      backlog_created_us_(backlog_created_us),
      start_ms_(backlog_created_us / 1000),
      produced_(backlog) {}

void Source::produce_until(std::int64_t target, std::int64_t now_us) {
    std::unique_lock lock(mutex_);
    std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    if (target <= have) return;
    const bool late = fault() == FaultMode::late;
    produced_us_.resize(produced_us_.size() + static_cast<std::size_t>(target - have), now_us);
    for (std::int64_t id = have + 1; id <= target; ++id) late_ms_.push_back(late ? lateness_ms(id) : 0);
    any_late_ = any_late_ || late;
    produced_.store(target, std::memory_order_release);
}

std::int64_t Source::created_us_locked(std::int64_t id) const {
    if (id <= backlog_) return backlog_created_us_;
    return produced_us_[static_cast<std::size_t>(id - backlog_ - 1)];
}

std::int64_t Source::updated_ms_locked(std::int64_t id) const {
    std::int64_t late = id <= backlog_ ? 0 : late_ms_[static_cast<std::size_t>(id - backlog_ - 1)];
    return start_ms_ + id - late;
}

EventRef Source::event_locked(std::int64_t id) const { return {id, created_us_locked(id), updated_ms_locked(id)}; }

std::vector<EventRef> Source::events_after(std::int64_t after_id, std::int64_t max) const {
    std::vector<EventRef> out;
    if (after_id < 0 || max <= 0) return out;
    std::shared_lock lock(mutex_);
    std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    if (after_id >= have) return out;
    std::int64_t last = std::min(have, after_id + max);
    out.reserve(static_cast<std::size_t>(last - after_id));
    for (std::int64_t id = after_id + 1; id <= last; ++id) out.push_back(event_locked(id));
    return out;
}

std::vector<EventRef> Source::events_from(std::int64_t first_id, std::int64_t count, std::int64_t now_us) const {
    std::vector<EventRef> out;
    if (count <= 0) return out;
    out.reserve(static_cast<std::size_t>(count));
    std::shared_lock lock(mutex_);
    std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    for (std::int64_t id = first_id; id < first_id + count; ++id) {
        out.push_back((id >= 1 && id <= have) ? event_locked(id) : EventRef{id, now_us, start_ms_ + id});
    }
    return out;
}

std::vector<EventRef> Source::events_updated_since(std::int64_t since_ms, std::int64_t max) const {
    std::vector<EventRef> out;
    if (max <= 0) return out;
    std::shared_lock lock(mutex_);
    const std::int64_t have = backlog_ + static_cast<std::int64_t>(produced_us_.size());
    const std::int64_t max_late = any_late_ ? kMaxLateMs : 0;
    // updated_ms of id i lies in [start + i - max_late, start + i]. Ids below `first` are too old;
    // ids from first + max_late on all qualify, so the `max` of them from there are an answer, and
    // no id past first + max + 2 * max_late can be earlier than those.
    const std::int64_t first = std::max<std::int64_t>(1, since_ms - start_ms_);
    const std::int64_t last = std::min(have, first + max + 2 * max_late);
    for (std::int64_t id = first; id <= last; ++id) {
        EventRef event = event_locked(id);
        if (event.updated_ms >= since_ms) out.push_back(event);
    }
    auto by_time = [](const EventRef& a, const EventRef& b) {
        return a.updated_ms != b.updated_ms ? a.updated_ms < b.updated_ms : a.id < b.id;
    };
    std::sort(out.begin(), out.end(), by_time);
    if (static_cast<std::int64_t>(out.size()) > max) out.resize(static_cast<std::size_t>(max));
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
