#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace tributary::metrics {

/// Which connection the listen server cuts off to make room for a new one:
/// the one that has waited longest for a request of its own (still sending
/// its head or body, or idle between keep-alive requests). A connection whose
/// request is being answered is never chosen.
///
/// libmicrohttpd closes a connection only after some seconds of silence and
/// refuses new connections at its limit, so without this, clients that
/// trickle a byte now and then could take every slot and lock a
/// supervisor's probe out. Called on the server's one polling thread only.
class WaitingConnections {
public:
    using Key = const void*;

    /// Past `room` connections (not counting those already cut off), each
    /// new one makes room.
    explicit WaitingConnections(std::size_t room) : room_(room) {}

    /// A new connection on `fd`. Returns the descriptor of the connection to
    /// cut off, if one must go and one is waiting.
    std::optional<int> opened(Key connection, int fd);
    /// Its request is whole and being answered.
    void busy(Key connection);
    /// Its answer is sent: it waits for its next request.
    void waiting(Key connection);
    void closed(Key connection);

    std::size_t open() const { return entries_.size(); }

private:
    struct Entry {
        int fd = -1;
        bool waiting = true;
        bool cut = false;
        std::uint64_t since = 0;  ///< when it began waiting, in calls
    };
    std::size_t room_;
    std::size_t live_ = 0;  ///< entries not cut off
    std::uint64_t tick_ = 0;
    std::unordered_map<Key, Entry> entries_;
};

}  // namespace tributary::metrics
