#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace tributary::webhook {

/// Decides which refusals get a log line: at most one per source per
/// interval, the rest counted and told in the next line, so that a flood of
/// bad requests (anyone may send them) cannot flood the log. Thread-safe.
class RefusalLog {
public:
    using Clock = std::chrono::steady_clock;

    explicit RefusalLog(Clock::duration interval = std::chrono::seconds(1)) : interval_(interval) {}

    /// Whether this refusal of `source` gets its line, said at `now`: then
    /// how many of the source's refusals went unlogged since its last line;
    /// nothing when this one is only counted.
    std::optional<std::size_t> admit(const std::string& source, Clock::time_point now);

private:
    struct Quiet {
        Clock::time_point last_line;
        std::size_t unlogged = 0;
    };
    const Clock::duration interval_;
    std::mutex mutex_;
    std::map<std::string, Quiet> sources_;  ///< known sources only: bounded by the catalogue
};

}  // namespace tributary::webhook
