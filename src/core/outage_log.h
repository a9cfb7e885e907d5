#pragma once

#include <mutex>
#include <string>

namespace tributary {

/// Says once that the database went away and once that it came back, however
/// many threads notice: an outage is one event for the reader of the log,
/// not one line per worker per retry. Thread-safe.
class OutageLog {
public:
    /// `context` starts every line, e.g. "group=orders consumer=host:42".
    explicit OutageLog(std::string context) : context_(std::move(context)) {}

    void down(const std::string& why);
    void up();
    bool is_down() const;

private:
    std::string context_;
    mutable std::mutex mutex_;
    bool down_ = false;
};

}  // namespace tributary
