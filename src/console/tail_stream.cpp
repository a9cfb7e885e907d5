#include "tail_stream.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace tributary::console {

TailStream::TailStream(std::unique_ptr<TailFeed> feed, TailSlot slot, std::string pattern, std::string position,
                       std::vector<TailEvent> first, Wakeup& wakeup, const StopSignal& stop, Timing timing,
                       std::string peer)
    : feed_(std::move(feed)),
      slot_(std::move(slot)),
      pattern_(std::move(pattern)),
      position_(std::move(position)),
      pending_(std::move(first)),
      wakeup_(wakeup),
      stop_(stop),
      timing_(timing),
      peer_(std::move(peer)) {
    spdlog::info("console: tail pattern={} by {} started", pattern_, peer_);
}

TailStream::~TailStream() { spdlog::info("console: tail pattern={} by {} ended", pattern_, peer_); }

std::string TailStream::frame(const TailEvent& event) {
    // The id and the JSON line hold no newline (JSON escapes them), so each
    // is one field line.
    return "id: " + event.id + "\nevent: event\ndata: " + event.json + "\n\n";
}

bool TailStream::send(const Write& write, std::string_view text) {
    if (!write(text)) return false;
    last_write_ = std::chrono::steady_clock::now();
    return true;
}

std::chrono::milliseconds TailStream::next_wait() const {
    const auto since_write = std::chrono::steady_clock::now() - last_write_;
    const auto until_keep_alive =
        std::chrono::duration_cast<std::chrono::milliseconds>(timing_.keep_alive - since_write);
    return std::clamp(until_keep_alive, std::chrono::milliseconds(1), timing_.poll);
}

bool TailStream::step(const Write& write, const Connected& connected) {
    if (stop_.stop_requested()) return false;
    if (!started_) {
        // A first comment: the client sees the stream open at once.
        started_ = true;
        std::string text = ": tail " + pattern_ + "\n\n";
        for (const auto& event : pending_) text += frame(event);
        if (!pending_.empty()) position_ = pending_.back().id;
        read_now_ = pending_.size() == static_cast<std::size_t>(timing_.batch);
        pending_.clear();
        return send(write, text);
    }
    if (!read_now_) {
        wakeup_.wait(next_wait());
        if (stop_.stop_requested() || (connected && !connected())) return false;
    }
    if (std::chrono::steady_clock::now() - last_write_ >= timing_.keep_alive && !send(write, ": keep-alive\n\n"))
        return false;
    return read_and_send(write);
}

bool TailStream::read_and_send(const Write& write) {
    read_now_ = false;
    std::vector<TailEvent> events;
    try {
        events = feed_->read(pattern_, position_, timing_.batch);
    } catch (const DatabaseUnavailable& e) {
        if (!in_outage_) {
            in_outage_ = true;
            spdlog::warn("console: tail pattern={} by {}: database unavailable: {}", pattern_, peer_, e.what());
            const nlohmann::json data = {{"error", std::string("database unavailable: ") + e.what()}};
            if (!send(write, "event: outage\ndata: " + data.dump() + "\n\n")) return false;
        }
        stop_.wait_for(outage_pause_.next());
        read_now_ = true;  // try again at once after the pause
        return !stop_.stop_requested();
    } catch (const std::exception& e) {
        spdlog::error("console: tail pattern={} by {} failed: {}", pattern_, peer_, e.what());
        return false;
    }
    std::string text;
    if (in_outage_) {
        in_outage_ = false;
        outage_pause_.reset();
        spdlog::info("console: tail pattern={} by {}: database back", pattern_, peer_);
        text = "event: resumed\ndata: {}\n\n";
    }
    for (const auto& event : events) text += frame(event);
    if (!events.empty()) position_ = events.back().id;
    read_now_ = events.size() == static_cast<std::size_t>(timing_.batch);
    return text.empty() || send(write, text);
}

}  // namespace tributary::console
