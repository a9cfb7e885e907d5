#include "chunk_queue.h"

#include <algorithm>

namespace tributary::fault_proxy {

void ChunkQueue::push(Clock::time_point due, const char* data, std::size_t size, bool cut_after) {
    last_due_ = std::max(last_due_, due);
    chunks_.push_back(Chunk{last_due_, std::vector<char>(data, data + size), 0, cut_after});
    bytes_ += size;
}

bool ChunkQueue::consume(std::size_t size) {
    Chunk& chunk = chunks_.front();
    chunk.written += size;
    bytes_ -= size;
    if (chunk.written < chunk.bytes.size()) return false;
    chunks_.pop_front();
    return true;
}

}  // namespace tributary::fault_proxy
