#pragma once

#include <cstddef>
#include <string>

namespace tributary::process {

/// The last `limit` bytes a command wrote to stderr: enough for the error
/// that explains a failure, bounded whatever the command writes.
class StderrTail {
public:
    explicit StderrTail(std::size_t limit) : limit_(limit) {}
    void append(const char* data, std::size_t size);
    /// The tail, prefixed with "..." when earlier output was dropped.
    std::string text() const;

private:
    std::size_t limit_;
    std::string kept_;
    bool dropped_ = false;
};

}  // namespace tributary::process
