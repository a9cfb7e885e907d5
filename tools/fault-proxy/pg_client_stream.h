#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tributary::fault_proxy {

// Follows one PostgreSQL v3 connection just far enough to find message boundaries, and reports
// where each client message that commits ends: a simple-query COMMIT, or the Sync that ends an
// implicit transaction (an extended-protocol statement sent outside a transaction block commits
// at its Sync, as tributary's one-statement appends do).
//
//   startup phase:  untyped messages, int32 length (including itself) + int32 code. An SSLRequest
//                   (80877103) or GSSENCRequest (80877104) is answered by the server with one byte:
//                   'N' = go on in clear (another untyped message follows), 'S'/'G' = the rest is
//                   encrypted and this stream stops looking (`opaque`). Any other code (the
//                   StartupMessage, a CancelRequest) ends the startup phase.
//   message phase:  typed messages, 1 type byte + int32 length (including itself), both ways.
//                   The server's ReadyForQuery ('Z') says whether the session is in a transaction
//                   block; a client Sync ('S') after an Execute ('E') while it is not commits.
//
// Anything that breaks these rules turns the stream `opaque`: bytes still flow, nothing is recognised.
// Where a client message that commits ends, and what it commits: "COMMIT" for a simple-query
// COMMIT, the prepared statement's name (as the last Bind named it; "" for the unnamed one) for a
// Sync that ends an implicit transaction.
struct CommitEnd {
    std::size_t end;  // the offset just past the message's last byte
    std::string statement;
};

class PgClientStream {
public:
    enum class Phase { startup, awaiting_encryption_answer, messages, opaque };

    // Client->server bytes, in order. Appends to `commit_ends`, for each simple-query ('Q') message
    // recognised as a COMMIT (see is_commit_query) and each Sync that ends an implicit transaction,
    // the offset in [data, data+size] just past its last byte and what it commits.
    void client_bytes(const char* data, std::size_t size, std::vector<CommitEnd>& commit_ends);

    // Server->client bytes, in order: the answer to an SSLRequest/GSSENCRequest, then the
    // transaction status of each ReadyForQuery. A client sends its next statement only after the
    // ReadyForQuery of the last one, which this proxy reads first: the status is then current.
    void server_bytes(const char* data, std::size_t size);

    Phase phase() const { return phase_; }
    // Why the stream became `opaque` ("" otherwise).
    const std::string& opaque_reason() const { return opaque_reason_; }

private:
    void become_opaque(std::string reason);
    // Called with the offset just past the end of the message that just completed.
    void message_complete(std::size_t end, std::vector<CommitEnd>& commit_ends);
    // Follows the server's typed messages for the status byte of each ReadyForQuery.
    void server_messages(const char* data, std::size_t size);

    Phase phase_ = Phase::startup;
    std::string opaque_reason_;
    unsigned char header_[8] = {};
    std::size_t header_have_ = 0;
    std::uint64_t body_remaining_ = 0;  // body bytes of the current message still to come
    bool in_body_ = false;
    bool capturing_ = false;  // keeping the body: a 'Q' short enough to be a COMMIT, or a Bind's names
    std::string query_;
    std::string bound_;            // the statement the last Bind named (since the last Sync)
    char type_ = 0;                // the type byte of the client message being read
    bool executed_ = false;        // an Execute was sent since the last Sync
    bool in_transaction_ = false;  // the last ReadyForQuery said 'T' or 'E' (in a transaction block)
    // The server's side, message phase only.
    unsigned char server_header_[5] = {};
    std::size_t server_header_have_ = 0;
    std::uint64_t server_body_remaining_ = 0;
    bool server_in_body_ = false;
    bool server_ready_ = false;  // the message being read is a ReadyForQuery: its first byte is the status
};

// True for the text of a simple query that commits, compared trimmed and case-insensitively:
// COMMIT or END, optionally followed by WORK or TRANSACTION, optionally followed by one ';'.
// The message's terminating NUL may be included.
bool is_commit_query(std::string_view text);

}  // namespace tributary::fault_proxy
