#include "pushed_source_cache.h"

#include <algorithm>
#include <exception>

#include <spdlog/spdlog.h>

#include "pushed_body.h"

namespace tributary::webhook {

PushedSourceCache::Lookup PushedSourceCache::find(const std::string& name, Clock::time_point now) {
    const auto sources = current(&name, now);
    if (!sources) return {Lookup::Kind::unavailable, std::nullopt};
    const auto it = sources->find(name);
    if (it == sources->end()) return {Lookup::Kind::unknown, std::nullopt};
    return {Lookup::Kind::found, it->second};
}

std::size_t PushedSourceCache::largest_body_bytes(Clock::time_point now) {
    const auto sources = current(nullptr, now);
    if (!sources || sources->empty()) return kDefaultMaxBodyBytes;
    std::size_t largest = 0;
    for (const auto& [name, source] : *sources) largest = std::max(largest, source.max_body_bytes);
    return largest;
}

void PushedSourceCache::mark_stale() {
    std::lock_guard lock(mutex_);
    stale_ = true;
}

// The sources to answer from, read again first when due (and no other
// thread is reading them already).
std::shared_ptr<const PushedSourceCache::Sources> PushedSourceCache::current(const std::string* wanted,
                                                                             Clock::time_point now) {
    {
        std::unique_lock lock(mutex_);
        // Nothing read yet: wait for the read under way rather than answer
        // 503 to every request that comes with the first.
        read_done_.wait(lock, [&] { return sources_ || !reading_; });
        const auto since = last_read_ ? now - *last_read_ : Clock::duration::max();
        bool due = stale_ || since >= refresh_every_;
        // Never read, or a name not known: sooner, but not a read per request.
        if (!due && (!sources_ || (wanted != nullptr && sources_->count(*wanted) == 0)))
            due = since >= kUnknownNameRefresh;
        if (!due || reading_) return sources_;
        reading_ = true;
    }
    refresh(now);
    std::lock_guard lock(mutex_);
    return sources_;
}

void PushedSourceCache::refresh(Clock::time_point now) {
    std::shared_ptr<Sources> fresh;
    std::string failure;
    try {
        fresh = std::make_shared<Sources>();
        for (auto& source : catalog_.pushed_sources()) {
            // Key pointers that cannot be read make the source unusable:
            // found once per read, not on every request.
            if (source.misconfigured.empty())
                if (auto problem = key_pointers_problem(source)) source.misconfigured = std::move(*problem);
            std::string name = source.name;
            fresh->emplace(std::move(name), std::move(source));
        }
    } catch (const std::exception& e) {
        fresh.reset();
        failure = e.what();
    }
    std::lock_guard lock(mutex_);
    reading_ = false;
    read_done_.notify_all();
    last_read_ = now;  // a failed read is not retried before its time either: no read per request in an outage
    if (!fresh) {
        if (!unreachable_)
            spdlog::error("receiver: cannot read the pushed sources, answering from the last read ({}): {}",
                          sources_ ? "kept" : "none yet, so 503", failure);
        unreachable_ = true;
        return;
    }
    if (unreachable_) spdlog::info("receiver: the pushed sources can be read again");
    unreachable_ = false;
    stale_ = false;
    sources_ = std::move(fresh);
}

}  // namespace tributary::webhook
