#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fault-proxy/pg_client_stream.h"

// The fault proxy's view of a PostgreSQL connection: where a client message
// that commits ends, so that /cut-after-commit can cut right after it.

using tributary::fault_proxy::CommitEnd;
using tributary::fault_proxy::PgClientStream;

namespace {

std::string be32(std::uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string message(char type, const std::string& body) {
    return std::string(1, type) + be32(static_cast<std::uint32_t>(body.size() + 4)) + body;
}

std::string startup() { return be32(8) + be32(196608); }  // protocol 3.0, no parameters
std::string ready(char status) { return message('Z', std::string(1, status)); }
std::string query(const std::string& text) { return message('Q', text + '\0'); }
/// Bind, Execute, Sync of a prepared statement: how libpq sends exec_prepared.
std::string bind_execute_sync(const std::string& statement = "stmt", std::size_t parameter_bytes = 0) {
    return message('B', std::string(1, '\0') + statement + std::string(1, '\0') + std::string(6, '\0') +
                            std::string(parameter_bytes, 'x')) +
           message('E', std::string(5, '\0')) + message('S', "");
}

/// Feeds `bytes` one at a time (the worst split) and returns the commits, their ends as offsets in `bytes`.
std::vector<CommitEnd> commits(PgClientStream& stream, const std::string& bytes) {
    std::vector<CommitEnd> out;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        std::vector<CommitEnd> here;
        stream.client_bytes(bytes.data() + i, 1, here);
        for (auto& c : here) out.push_back({i + c.end, c.statement});
    }
    return out;
}

std::vector<std::size_t> client(PgClientStream& stream, const std::string& bytes) {
    std::vector<std::size_t> ends;
    for (const auto& c : commits(stream, bytes)) ends.push_back(c.end);
    return ends;
}

void server(PgClientStream& stream, const std::string& bytes) { stream.server_bytes(bytes.data(), bytes.size()); }

PgClientStream connected() {
    PgClientStream stream;
    std::vector<CommitEnd> ignored;
    const auto hello = startup();
    stream.client_bytes(hello.data(), hello.size(), ignored);
    server(stream, message('R', be32(0)) + message('K', std::string(8, '\0')) + ready('I'));
    return stream;
}

}  // namespace

TEST_CASE("fault proxy: a simple-query COMMIT ends where its message ends") {
    auto stream = connected();
    const auto bytes = query("BEGIN") + query("commit;");
    CHECK(client(stream, bytes) == std::vector<std::size_t>{bytes.size()});
}

TEST_CASE("fault proxy: a statement outside a transaction block commits at its Sync") {
    auto stream = connected();
    const auto bytes = bind_execute_sync();
    CHECK(client(stream, bytes) == std::vector<std::size_t>{bytes.size()});
    server(stream, message('2', "") + message('C', std::string("SELECT 1\0", 9)) + ready('I'));
    CHECK(client(stream, bytes).size() == 1);
}

TEST_CASE("fault proxy: inside a transaction block a Sync commits nothing; the COMMIT does") {
    auto stream = connected();
    CHECK(client(stream, query("BEGIN")).empty());
    server(stream, message('C', std::string("BEGIN\0", 6)) + ready('T'));
    CHECK(client(stream, bind_execute_sync()).empty());
    server(stream, ready('T'));
    const auto commit = query("COMMIT");
    CHECK(client(stream, commit) == std::vector<std::size_t>{commit.size()});
    server(stream, ready('I'));
    CHECK(client(stream, bind_execute_sync()).size() == 1);
}

TEST_CASE("fault proxy: a Sync with no Execute before it (a prepare) commits nothing") {
    auto stream = connected();
    CHECK(client(stream, message('P', std::string("stmt\0SELECT 1\0\0\0", 17)) + message('S', "")).empty());
}

TEST_CASE("fault proxy: a server message with a broken length makes the stream opaque") {
    auto stream = connected();
    server(stream, std::string(1, 'Z') + be32(2));
    CHECK(stream.phase() == PgClientStream::Phase::opaque);
    CHECK(client(stream, bind_execute_sync()).empty());
}

TEST_CASE("fault proxy: a commit says what it commits: COMMIT, or the statement its Bind named") {
    auto stream = connected();
    const auto append = bind_execute_sync("tributary_turn_append_keyed", 10000);  // names kept, parameters not
    const auto found = commits(stream, append);
    REQUIRE(found.size() == 1);
    CHECK(found[0].statement == "tributary_turn_append_keyed");
    server(stream, ready('I'));
    CHECK(commits(stream, bind_execute_sync("")).at(0).statement.empty());  // the unnamed statement
    server(stream, ready('I'));
    CHECK(commits(stream, query("END")).at(0).statement == "COMMIT");
}
