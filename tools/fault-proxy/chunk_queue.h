#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <vector>

namespace tributary::fault_proxy {

using Clock = std::chrono::steady_clock;

// What one direction of a connection pair has read and not yet written, in order. Each chunk
// carries the time it may be written (read time + the delay in force then); a chunk is never due
// before the one ahead of it, so lowering the delay never reorders bytes.
class ChunkQueue {
public:
    struct Chunk {
        Clock::time_point due;
        std::vector<char> bytes;
        std::size_t written = 0;
        bool cut_after = false;  // close the pair once this chunk is written in full
    };

    void push(Clock::time_point due, const char* data, std::size_t size, bool cut_after);
    bool empty() const { return chunks_.empty(); }
    Chunk& front() { return chunks_.front(); }
    const Chunk& front() const { return chunks_.front(); }
    // Marks `size` more bytes of the front chunk written; drops it once whole. True when it was dropped.
    bool consume(std::size_t size);
    std::size_t bytes() const { return bytes_; }  // not yet written

private:
    std::deque<Chunk> chunks_;
    std::size_t bytes_ = 0;
    Clock::time_point last_due_{};
};

}  // namespace tributary::fault_proxy
