#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "connection_pair.h"
#include "mailbox.h"
#include "proxy_stats.h"
#include "sockets.h"

namespace tributary::fault_proxy {

// The data path: one thread, one poll() loop over the listening socket and every connection pair.
// It accepts clients, connects each to the target, forwards bytes both ways (each direction in
// order, at most kMaxQueuedBytes read ahead of the writer) and applies the faults.
//
// All state belongs to the loop thread. The fault and stats methods must run on it: other
// threads go through mailbox().call(...).
class Proxy {
public:
    // Takes ownership of `listen_fd`.
    Proxy(int listen_fd, SocketAddress target, std::string target_name);
    ~Proxy();
    Proxy(const Proxy&) = delete;
    Proxy& operator=(const Proxy&) = delete;

    // Runs until `stop_fd` becomes readable (a signalfd), then resets every open connection.
    void run(int stop_fd);
    Mailbox& mailbox() { return mailbox_; }

    // --- faults (loop thread) ---
    // Resets every open connection pair; returns how many. (Not the server-side remnants of
    // commit cuts: a reset could still destroy their COMMIT.)
    std::size_t cut_all();
    // The next `count` COMMITs (across all connections) are forwarded, then their pair is reset
    // before any byte of the answer reaches the client. Replaces any count still pending. With a
    // `statement` prefix, only commits of a statement whose name starts with it count (see
    // CommitEnd: "COMMIT", or a prepared statement's name).
    void cut_after_commits(std::int64_t count, std::string statement = "");
    // Latency added to every chunk read from now on, both directions. Returns the previous one.
    std::chrono::milliseconds set_delay(std::chrono::milliseconds delay);
    // On: every open and new connection swallows what it reads and forwards nothing; returns how
    // many were open. Off: resets those connections; returns how many.
    std::size_t set_blackhole(bool on);
    // On: new client connections are reset as soon as they are accepted.
    void set_refuse(bool on);
    // Every fault off (resets connections still in a blackhole); returns how many were reset.
    std::size_t heal();
    ProxyStats stats() const;

private:
    using PairPtr = std::unique_ptr<ConnectionPair>;

    void accept_all();
    void finish_connect(ConnectionPair& pair);
    void read_client(ConnectionPair& pair, Clock::time_point now);
    void read_server(ConnectionPair& pair, Clock::time_point now);
    void flush(ConnectionPair& pair, Clock::time_point now);
    void flush_flow(ConnectionPair& pair, Flow& flow, int fd, std::uint64_t& counter, Clock::time_point now);
    void begin_commit_drain(ConnectionPair& pair, Clock::time_point now);
    void drain_server(ConnectionPair& pair, short revents, Clock::time_point now);
    void note_protocol_change(ConnectionPair& pair, PgClientStream::Phase before);
    // Both sockets closed with a reset; `why` is logged at debug level.
    void abort_pair(ConnectionPair& pair, const std::string& why);
    void close_pair(ConnectionPair& pair);
    bool wants_client_read(const ConnectionPair& pair) const;
    bool wants_server_read(const ConnectionPair& pair) const;

    int listen_fd_;
    SocketAddress target_;
    std::string target_name_;
    Mailbox mailbox_;
    std::vector<PairPtr> pairs_;
    std::vector<char> buffer_;
    std::vector<CommitEnd> commit_ends_;
    std::uint64_t next_id_ = 0;

    std::chrono::milliseconds delay_{0};
    bool blackhole_ = false;
    bool refuse_ = false;
    std::int64_t pending_commit_cuts_ = 0;
    std::string commit_cut_statement_;  // the prefix the pending cuts wait for ("" = any commit)
    ProxyStats counters_;
};

}  // namespace tributary::fault_proxy
