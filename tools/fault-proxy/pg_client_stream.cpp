#include "pg_client_stream.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace tributary::fault_proxy {
namespace {

constexpr std::uint32_t kSslRequestCode = 80877103;
constexpr std::uint32_t kGssEncRequestCode = 80877104;
constexpr std::uint32_t kMaxStartupLength = 10000;  // PostgreSQL's own MAX_STARTUP_PACKET_LENGTH
// A COMMIT query is a few bytes; longer 'Q' messages are skipped without being kept.
constexpr std::uint64_t kMaxCommitCandidate = 256;
// A Bind starts with two names (portal, statement), each at most NAMEDATALEN (64) bytes with its NUL.
constexpr std::size_t kBindNames = 2 * 64;

// The statement a Bind names: its second NUL-terminated string ("" when cut short).
std::string bound_statement(const std::string& body) {
    const auto portal_end = body.find('\0');
    if (portal_end == std::string::npos) return "";
    const auto statement_end = body.find('\0', portal_end + 1);
    if (statement_end == std::string::npos) return "";
    return body.substr(portal_end + 1, statement_end - portal_end - 1);
}

std::uint32_t read_be32(const unsigned char* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
           });
}

}  // namespace

bool is_commit_query(std::string_view text) {
    while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
    text = trim(text);
    if (!text.empty() && text.back() == ';') text = trim(text.substr(0, text.size() - 1));
    std::size_t word_end = 0;
    while (word_end < text.size() && !is_space(text[word_end])) ++word_end;
    std::string_view verb = text.substr(0, word_end);
    std::string_view rest = trim(text.substr(word_end));
    if (!iequals(verb, "COMMIT") && !iequals(verb, "END")) return false;
    return rest.empty() || iequals(rest, "WORK") || iequals(rest, "TRANSACTION");
}

void PgClientStream::become_opaque(std::string reason) {
    phase_ = Phase::opaque;
    opaque_reason_ = std::move(reason);
    query_.clear();
    query_.shrink_to_fit();
}

void PgClientStream::server_bytes(const char* data, std::size_t size) {
    if (phase_ == Phase::messages) return server_messages(data, size);
    if (phase_ != Phase::awaiting_encryption_answer || size == 0) return;
    switch (data[0]) {
        case 'N':
            phase_ = Phase::startup;  // in clear: the real startup message comes next
            break;
        case 'S': become_opaque("the session is encrypted (SSL)"); break;
        case 'G': become_opaque("the session is encrypted (GSSAPI)"); break;
        default: become_opaque("unexpected answer to an encryption request"); break;
    }
}

void PgClientStream::server_messages(const char* data, std::size_t size) {
    std::size_t i = 0;
    while (i < size) {
        if (server_in_body_) {
            const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(server_body_remaining_, size - i));
            if (server_ready_ && take > 0) {
                in_transaction_ = data[i] != 'I';  // 'I' idle, 'T' in a block, 'E' in a failed block
                server_ready_ = false;
            }
            i += take;
            server_body_remaining_ -= take;
            if (server_body_remaining_ == 0) server_in_body_ = false;
            continue;
        }
        const std::size_t take = std::min(sizeof server_header_ - server_header_have_, size - i);
        std::memcpy(server_header_ + server_header_have_, data + i, take);
        server_header_have_ += take;
        i += take;
        if (server_header_have_ < sizeof server_header_) return;
        server_header_have_ = 0;
        const std::uint32_t length = read_be32(server_header_ + 1);
        if (length < 4 || length > 0x7fffffffu) {
            become_opaque("invalid length " + std::to_string(length) + " of a server message of type " +
                          std::to_string(static_cast<int>(server_header_[0])));
            return;
        }
        server_body_remaining_ = length - 4;
        server_ready_ = server_header_[0] == 'Z';
        server_in_body_ = server_body_remaining_ > 0;
    }
}

void PgClientStream::message_complete(std::size_t end, std::vector<CommitEnd>& commit_ends) {
    in_body_ = false;
    if (type_ == 'Q' && capturing_ && is_commit_query(query_)) commit_ends.push_back({end, "COMMIT"});
    if (type_ == 'B') bound_ = bound_statement(query_);
    if (type_ == 'E') executed_ = true;
    if (type_ == 'S') {
        // Outside a transaction block, what was executed since the last Sync commits now.
        if (executed_ && !in_transaction_) commit_ends.push_back({end, bound_});
        executed_ = false;
        bound_.clear();
    }
    type_ = 0;
    capturing_ = false;
    query_.clear();
}

void PgClientStream::client_bytes(const char* data, std::size_t size, std::vector<CommitEnd>& commit_ends) {
    std::size_t i = 0;
    while (i < size) {
        if (phase_ == Phase::opaque) return;
        if (phase_ == Phase::awaiting_encryption_answer) {
            // A client waits for the one-byte answer, which this proxy reads before the client can.
            become_opaque("client data before the answer to its encryption request");
            return;
        }
        if (in_body_) {
            std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(body_remaining_, size - i));
            if (capturing_) {
                // A Bind's body can be large (its parameters): only its names are kept.
                const std::size_t room = type_ == 'B' ? kBindNames - std::min(kBindNames, query_.size()) : take;
                query_.append(data + i, std::min(take, room));
            }
            i += take;
            body_remaining_ -= take;
            if (body_remaining_ == 0) message_complete(i, commit_ends);
            continue;
        }

        const std::size_t need = phase_ == Phase::startup ? 8 : 5;
        std::size_t take = std::min(need - header_have_, size - i);
        std::memcpy(header_ + header_have_, data + i, take);
        header_have_ += take;
        i += take;
        if (header_have_ < need) return;
        header_have_ = 0;

        if (phase_ == Phase::startup) {
            const std::uint32_t length = read_be32(header_);
            const std::uint32_t code = read_be32(header_ + 4);
            if (length < 8 || length > kMaxStartupLength) {
                become_opaque("invalid startup message length " + std::to_string(length));
                return;
            }
            if (code == kSslRequestCode || code == kGssEncRequestCode) {
                if (length != 8) {
                    become_opaque("invalid encryption request length " + std::to_string(length));
                    return;
                }
                phase_ = Phase::awaiting_encryption_answer;
                continue;
            }
            phase_ = Phase::messages;  // StartupMessage (or CancelRequest: nothing follows)
            body_remaining_ = length - 8;
        } else {
            const std::uint32_t length = read_be32(header_ + 1);
            if (length < 4 || length > 0x7fffffffu) {
                become_opaque("invalid length " + std::to_string(length) + " of a message of type " +
                              std::to_string(static_cast<int>(header_[0])));
                return;
            }
            body_remaining_ = length - 4;
            type_ = static_cast<char>(header_[0]);
            capturing_ = (header_[0] == 'Q' && body_remaining_ <= kMaxCommitCandidate) || header_[0] == 'B';
        }
        in_body_ = true;
        if (body_remaining_ == 0) message_complete(i, commit_ends);
    }
}

}  // namespace tributary::fault_proxy
