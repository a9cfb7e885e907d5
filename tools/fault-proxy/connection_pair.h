#pragma once

#include <cstdint>
#include <string>

#include "chunk_queue.h"
#include "pg_client_stream.h"

namespace tributary::fault_proxy {

// One direction of a connection pair.
struct Flow {
    ChunkQueue queue;               // read from the source side, not yet written to the other
    bool source_eof = false;        // the source side ended its stream
    bool destination_shut = false;  // that end was passed on (shutdown(SHUT_WR)) after the queue
};

// A client connection and the connection to the target made for it. Owned by the event loop.
struct ConnectionPair {
    enum class CommitCut {
        none,
        armed,  // a COMMIT was chosen for a cut: it is queued, nothing after it is read from the client
        // The COMMIT is written and the client reset. The server's side was half-closed after the
        // COMMIT; its answers are read and dropped until it closes (the server-side remnant).
        draining,
    };

    std::uint64_t id = 0;
    std::string client_name;  // "host:port" of the client, for logs
    int client = -1;
    int server = -1;          // -1: never connected (accepted during a blackhole)
    bool connecting = false;  // the connect to the target is in progress
    Flow up;                  // client -> server
    Flow down;                // server -> client
    PgClientStream protocol;
    bool blackholed = false;  // open during a blackhole: swallows everything, reset when it ends
    CommitCut commit_cut = CommitCut::none;
    Clock::time_point drain_deadline{};  // draining: reset the server side if it has not closed by then
    std::uint64_t bytes_discarded = 0;   // draining: server answers dropped
    bool closed = false;                 // both sockets are closed; dropped at the end of the loop iteration

    // Indices into this iteration's poll set, -1 when not polled.
    int client_poll = -1;
    int server_poll = -1;
};

}  // namespace tributary::fault_proxy
