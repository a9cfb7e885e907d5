#include "waiting_connections.h"

namespace tributary::metrics {

std::optional<int> WaitingConnections::opened(Key connection, int fd) {
    entries_[connection] = Entry{fd, true, false, ++tick_};
    if (++live_ <= room_) return std::nullopt;
    Entry* oldest = nullptr;
    for (auto& [key, entry] : entries_)
        if (key != connection && entry.waiting && !entry.cut && (!oldest || entry.since < oldest->since))
            oldest = &entry;
    if (!oldest) return std::nullopt;  // every other one is being answered: the server's limit decides
    oldest->cut = true;
    --live_;
    return oldest->fd;
}

void WaitingConnections::busy(Key connection) {
    const auto found = entries_.find(connection);
    if (found != entries_.end()) found->second.waiting = false;
}

void WaitingConnections::waiting(Key connection) {
    const auto found = entries_.find(connection);
    if (found == entries_.end()) return;
    found->second.waiting = true;
    found->second.since = ++tick_;
}

void WaitingConnections::closed(Key connection) {
    const auto found = entries_.find(connection);
    if (found == entries_.end()) return;
    if (!found->second.cut) --live_;
    entries_.erase(found);
}

}  // namespace tributary::metrics
