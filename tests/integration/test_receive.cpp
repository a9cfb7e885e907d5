// `tributary receive` over real HTTP (issue 15): a child process logged in as
// a member of tributary_receiver only, senders posting with cpp-httplib (or a
// raw socket where a client library would not misbehave enough), and what
// the database then holds.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "support/child_process.h"
#include "support/consume_rig.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"
#include "webhook/hmac_sha256.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

const std::string kGithubSecret = "gh-secret-1";
const std::string kStripeSecret = "whsec_test_2";
const std::string kToken = "bearer-token-3";

/// A database with one source of each kind of authentication, and a receiver on it.
class ReceiverRig {
public:
    explicit ReceiverRig(std::vector<std::string> flags = {}) {
        db.exec("GRANT tributary_receiver TO " + role.name());
        add({"gh", "--signature", "github", "--hmac-secret-env", "GH_SECRET"});
        add({"stripe", "--signature", "stripe", "--hmac-secret-env", "STRIPE_SECRET"});
        add({"bearer", "--bearer-token-env", "HOOK_TOKEN"});
        add({"open", "--insecure-no-auth"});
        add({"other", "--insecure-no-auth", "--max-body-bytes", "4096"});
        add({"paused", "--insecure-no-auth"});
        run_tributary(db.url(), {"source", "pause", "paused"});
        start(std::move(flags));
    }

    void start(std::vector<std::string> flags = {}) {
        std::vector<std::string> args{"receive", "--listen", "127.0.0.1:0"};
        args.insert(args.end(), flags.begin(), flags.end());
        receiver = std::make_unique<ChildProcess>(
            tributary_args(as_user(db.url(), role.name()), args),
            std::vector<std::string>{"GH_SECRET=" + kGithubSecret, "STRIPE_SECRET=" + kStripeSecret,
                                     "HOOK_TOKEN=" + kToken});
        port = std::stoi(wait_for_log(*receiver, R"(receiving webhooks on \S+ \(port (\d+)\))"));
    }

    httplib::Result post(const std::string& source, const std::string& body, const httplib::Headers& headers = {},
                         const std::string& type = "application/json") {
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(60, 0);
        return client.Post(("/sources/" + source + "/events").c_str(), headers, body, type.c_str());
    }

    std::size_t stored(const std::string& source) const {
        return std::stoul(db.scalar(
            "SELECT count(*) FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = '" +
            source + "'"));
    }

    TestDatabase db;
    LoginRole role{db, "receiver"};
    std::unique_ptr<ChildProcess> receiver;
    int port = 0;

private:
    void add(std::vector<std::string> flags) {
        flags.insert(flags.begin(), {"source", "add"});
        flags.insert(flags.begin() + 3, "--push");
        run_tributary(db.url(), flags);
    }
};

httplib::Headers github_headers(const std::string& body, const std::string& secret = kGithubSecret) {
    return {
        {"X-Hub-Signature-256", "sha256=" + tributary::webhook::to_hex(tributary::webhook::hmac_sha256(secret, body))}};
}

httplib::Headers stripe_headers(const std::string& body, std::time_t at = std::time(nullptr)) {
    const auto t = std::to_string(at);
    return {{"Stripe-Signature",
             "t=" + t +
                 ",v1=" + tributary::webhook::to_hex(tributary::webhook::hmac_sha256(kStripeSecret, t + "." + body))}};
}

int status_of(const httplib::Result& result) { return result ? result->status : 0; }

/// A raw connection to the receiver, for what no client library sends.
class RawConnection {
public:
    explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        timeval timeout{60, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    }
    ~RawConnection() { ::close(fd_); }
    /// false once the receiver has closed the connection.
    bool send(const std::string& bytes) { return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) >= 0; }
    /// Everything until the receiver closes the connection (or a minute passes).
    std::string read_to_end() {
        std::string out;
        char buffer[4096];
        for (;;) {
            const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n <= 0) return out;
            out.append(buffer, static_cast<std::size_t>(n));
        }
    }

    /// Whether the receiver closed the connection (rather than a minute passing first).
    bool closed_by_receiver() {
        char byte;
        return ::recv(fd_, &byte, 1, 0) == 0;
    }

private:
    int fd_;
};

/// Whether backend `pid` is waiting for a lock (a row's, a transaction's, an advisory one).
bool waits_for_lock(const TestDatabase& db, int pid) {
    return db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid) +
                     " AND wait_event_type = 'Lock'") == "1";
}

/// Whether some session of this test's database waits for a lock.
bool some_session_waits_for_lock(const TestDatabase& db) {
    return db.scalar(
               "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
               " AND wait_event_type = 'Lock'") != "0";
}

/// One group commit's statement: event `key` of request 1 to source `id`.
std::string store_one(const std::string& id, const std::string& key) {
    return "SELECT stored FROM tributary.receiver_store('{1}', '{" + id + "}', '{" + key + "}', '[{}]')";
}

}  // namespace

TEST_CASE("receive: a GitHub-signed request is stored once, its repeat answered 200 storing nothing", "[receive]") {
    ReceiverRig rig;
    const std::string body = R"({"id": 1, "action": "opened"})";
    const auto first = rig.post("gh", body, github_headers(body));
    REQUIRE(status_of(first) == 201);
    CHECK(nlohmann::json::parse(first->body).at("stored") == 1);
    CHECK(rig.stored("gh") == 1);

    const auto again = rig.post("gh", body, github_headers(body));
    REQUIRE(status_of(again) == 200);
    CHECK(nlohmann::json::parse(again->body).at("stored") == 0);
    CHECK(rig.stored("gh") == 1);
    CHECK(rig.db.scalar("SELECT payload->>'action' FROM tributary.events WHERE event_key = '1'") == "opened");
}

TEST_CASE("receive: Stripe-signed and bearer requests are stored", "[receive]") {
    ReceiverRig rig;
    const std::string body = R"({"id": "evt_1", "type": "charge.succeeded"})";
    CHECK(status_of(rig.post("stripe", body, stripe_headers(body))) == 201);
    CHECK(rig.stored("stripe") == 1);
    CHECK(status_of(rig.post("bearer", R"({"id": 7})", {{"Authorization", "Bearer " + kToken}})) == 201);
    CHECK(rig.stored("bearer") == 1);
}

TEST_CASE("receive: every tampering is refused 401 and stores nothing", "[receive]") {
    ReceiverRig rig;
    const std::string body = R"({"id": 2, "amount": 100})";
    std::string tampered = body;
    tampered[tampered.size() - 3] = '9';  // one byte of the body
    CHECK(status_of(rig.post("gh", tampered, github_headers(body))) == 401);
    CHECK(status_of(rig.post("gh", body, github_headers(body, "wrong-secret"))) == 401);
    CHECK(status_of(rig.post("gh", body)) == 401);  // no signature header
    CHECK(status_of(rig.post("stripe", body, stripe_headers(body, std::time(nullptr) - 3600))) == 401);  // stale
    CHECK(status_of(rig.post("stripe", tampered, stripe_headers(body))) == 401);
    CHECK(status_of(rig.post("bearer", body, {{"Authorization", "Bearer not-" + kToken}})) == 401);
    CHECK(status_of(rig.post("bearer", body)) == 401);
    CHECK(rig.stored("gh") == 0);
    CHECK(rig.stored("stripe") == 0);
    CHECK(rig.stored("bearer") == 0);
}

TEST_CASE("receive: unknown source 404, paused 503, oversize 413, bad bodies 400 with the reason", "[receive]") {
    ReceiverRig rig;
    CHECK(status_of(rig.post("nosuch", R"({"id": 1})")) == 404);
    const auto paused = rig.post("paused", R"({"id": 1})");
    CHECK(status_of(paused) == 503);
    CHECK(paused->has_header("Retry-After"));
    CHECK(status_of(rig.post("other", R"({"id": 1, "pad": ")" + std::string(5000, 'x') + "\"}")) == 413);

    const auto invalid = rig.post("open", R"({"id": 1,)");
    CHECK(status_of(invalid) == 400);
    CHECK_FALSE(nlohmann::json::parse(invalid->body).at("error").get<std::string>().empty());
    const auto keyless = rig.post("open", R"({"name": "no id"})");
    CHECK(status_of(keyless) == 400);
    CHECK_THAT(keyless->body, Catch::Contains("/id"));
    CHECK(rig.stored("open") == 0);
    CHECK(rig.stored("paused") == 0);
}

TEST_CASE("receive: one request of more events than --max-queued-events is 413, saying the limit and the flag",
          "[receive]") {
    ReceiverRig rig({"--max-queued-events", "20"});
    std::string body = "[";
    for (int i = 1; i <= 25; ++i) body += (i > 1 ? "," : "") + std::string(R"({"id": )") + std::to_string(i) + "}";
    body += "]";
    const auto over = rig.post("open", body);
    REQUIRE(status_of(over) == 413);
    CHECK_FALSE(over->has_header("Retry-After"));
    CHECK(nlohmann::json::parse(over->body).at("error") ==
          "the request holds 25 events, more than the 20 the receiver queues (its --max-queued-events): send them in "
          "smaller requests");
    CHECK(rig.stored("open") == 0);
}

TEST_CASE("receive: array and NDJSON bodies are stored all or nothing", "[receive]") {
    ReceiverRig rig;
    CHECK(status_of(rig.post("open", R"([{"id": 1}, {"id": 2}, {"nokey": 3}])")) == 400);
    CHECK(status_of(rig.post("open", "{\"id\": 4}\n{\"id\": 5}\n{\"id\": \n", {}, "application/x-ndjson")) == 400);
    CHECK(rig.stored("open") == 0);

    const auto array = rig.post("open", R"([{"id": 1}, {"id": 2}, {"id": 3}])");
    REQUIRE(status_of(array) == 201);
    CHECK(nlohmann::json::parse(array->body).at("stored") == 3);
    const auto ndjson = rig.post("open", "{\"id\": 3}\n{\"id\": 4}\n{\"id\": 5}\n", {}, "application/x-ndjson");
    REQUIRE(status_of(ndjson) == 201);
    CHECK(nlohmann::json::parse(ndjson->body).at("stored") == 2);
    CHECK(rig.stored("open") == 5);
    CHECK(rig.db.scalar("SELECT string_agg(event_key, ',' ORDER BY seq) FROM tributary.events") == "1,2,3,4,5");
}

TEST_CASE("receive: the Idempotency-Key header keys a request's events", "[receive]") {
    ReceiverRig rig;
    CHECK(status_of(rig.post("open", R"({"no": "id"})", {{"Idempotency-Key", "req-1"}})) == 201);
    CHECK(status_of(rig.post("open", R"({"no": "id"})", {{"Idempotency-Key", "req-1"}})) == 200);
    CHECK(rig.db.scalar("SELECT string_agg(event_key, ',') FROM tributary.events") == "req-1");
}

TEST_CASE("receive: while the database cannot be reached 503 with Retry-After, then the same request is stored",
          "[receive]") {
    ReceiverRig rig;
    const std::string body = R"({"id": 10})";
    REQUIRE(status_of(rig.post("open", R"({"id": 9})")) == 201);
    // The receiver's sessions ended, and no new ones allowed.
    const auto database = rig.db.scalar("SELECT current_database()");
    rig.db.exec("REVOKE CONNECT ON DATABASE " + database + " FROM PUBLIC");
    rig.db.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + rig.role.name() + "'");
    const auto refused = rig.post("open", body);
    CHECK(status_of(refused) == 503);
    REQUIRE(refused);
    CHECK(refused->has_header("Retry-After"));
    CHECK(rig.stored("open") == 1);

    rig.db.exec("GRANT CONNECT ON DATABASE " + database + " TO PUBLIC");
    int status = 0;
    // Until the receiver has reconnected (its backoff, not a deadline): a state, not a time.
    for (int attempt = 0; attempt < 1200 && status != 201; ++attempt) {
        status = status_of(rig.post("open", body));
        if (status != 201) std::this_thread::sleep_for(100ms);
    }
    CHECK(status == 201);
    CHECK(rig.stored("open") == 2);
}

TEST_CASE("receive: hostile bodies are answered and harm no other source", "[receive]") {
    ReceiverRig rig({"--request-timeout", "2s"});
    std::size_t other_stored = 0;
    const auto other_still_works = [&] {
        const auto id = std::to_string(++other_stored);
        CHECK(status_of(rig.post("other", R"({"id": )" + id + "}")) == 201);
        CHECK(rig.stored("other") == other_stored);
    };

    SECTION("deep nesting") {
        CHECK(status_of(rig.post("open", std::string(100000, '[') + std::string(100000, ']'))) == 400);
        CHECK(status_of(rig.post(
                  "open", R"({"id": 1, "x": )" + std::string(100000, '[') + std::string(100000, ']') + "}")) == 400);
    }
    SECTION("NUL") {
        std::string raw_nul = R"({"id": 1, "x": "a)";
        raw_nul += '\0';
        raw_nul += R"(b"})";
        CHECK(status_of(rig.post("open", raw_nul)) == 400);
        CHECK(status_of(rig.post("open", R"({"id": 1, "x": "a\u0000b"})")) == 400);
    }
    SECTION("invalid UTF-8") {
        CHECK(status_of(rig.post("open", "{\"id\": 1, \"x\": \"\xff\xfe\"}")) == 400);
        CHECK(status_of(rig.post("open", "{\"id\": \"\xc3\x28\"}")) == 400);
    }
    SECTION("100 MB announced by Content-Length") {
        RawConnection raw(rig.port);
        raw.send(
            "POST /sources/open/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 104857600\r\n\r\n");
        const auto answer = raw.read_to_end();
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 413"));
    }
    SECTION("100 MB chunked, without Content-Length") {
        httplib::Client client("127.0.0.1", rig.port);
        client.set_write_timeout(60, 0);
        client.set_read_timeout(60, 0);
        const std::string chunk(1024 * 1024, ' ');
        std::size_t sent = 0;
        const auto result = client.Post(
            "/sources/open/events",
            [&](std::size_t, httplib::DataSink& sink) {
                if (sent == 0) sink.write("{\"id\": 1, \"x\": \"", 16);
                if (sent >= 100) {
                    sink.done();
                    return true;
                }
                ++sent;
                return sink.write(chunk.data(), chunk.size());
            },
            "application/json");
        // libmicrohttpd (0.9.75) cannot answer before the body ends: what
        // passes the limit is dropped as it comes (never held), and the
        // answer follows the body.
        REQUIRE(result);
        CHECK(result->status == 413);
    }
    SECTION("a slow drip is cut") {
        RawConnection raw(rig.port);
        const std::string request =
            "POST /sources/open/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
            "200\r\n\r\n";
        REQUIRE(raw.send(request));
        // A byte every 100 ms would take 20 s; the receiver cuts it after its 2 s.
        bool open = true;
        for (int i = 0; i < 200 && open; ++i) {
            open = raw.send("{");
            std::this_thread::sleep_for(100ms);
            if (i == 5) other_still_works();
        }
        CHECK_FALSE(open);
    }
    CHECK(rig.stored("open") == 0);
    other_still_works();
}

TEST_CASE("receive: bodies held at once stay within --max-body-bytes-in-flight, 503 past it", "[receive]") {
    ReceiverRig rig({"--max-body-bytes-in-flight", "1000000"});
    const auto padded = [](int id, std::size_t bytes) {
        return R"({"id": )" + std::to_string(id) + R"(, "pad": ")" + std::string(bytes, 'x') + "\"}";
    };
    {
        // A sender announces 800 000 bytes and sends none: they are its.
        RawConnection holder(rig.port);
        REQUIRE(
            holder.send("POST /sources/open/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Content-Length: 800000\r\n\r\n"));
        std::this_thread::sleep_for(200ms);  // (only so that the head is in before the next request)
        const auto refused = rig.post("open", padded(1, 300000));
        REQUIRE(status_of(refused) == 503);
        CHECK(refused->has_header("Retry-After"));
        CHECK(status_of(rig.post("open", padded(2, 1000))) == 201);
    }
    // Its connection closed, the room is back.
    int status = 0;
    for (int attempt = 0; attempt < 2400 && status != 201; ++attempt) {
        status = status_of(rig.post("open", padded(1, 300000)));
        if (status != 201) std::this_thread::sleep_for(50ms);
    }
    CHECK(status == 201);
    CHECK(rig.stored("open") == 2);
}

TEST_CASE("receive: past --max-queued-events waiting for a commit, 503 with Retry-After; the others are stored",
          "[receive]") {
    ReceiverRig rig({"--max-queued-events", "5", "--metrics-listen", "127.0.0.1:0"});
    const int metrics_port =
        std::stoi(wait_for_log(*rig.receiver, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    const auto in_flight = [&] {
        httplib::Client metrics("127.0.0.1", metrics_port);
        const auto scraped = metrics.Get("/metrics");
        const std::string name = "\ntributary_receiver_requests_in_flight ";
        const auto at = scraped ? scraped->body.find(name) : std::string::npos;
        return at == std::string::npos ? -1 : std::stoi(scraped->body.substr(at + name.size()));
    };
    // Commits wait on a lock the test holds (the source's publish lock,
    // exclusive, as a removal would hold it): the first request is in a
    // commit, the next four wait for theirs.
    pqxx::connection blocker(rig.db.url());
    pqxx::work lock(blocker);
    lock.exec("SELECT pg_advisory_xact_lock(1953655138, -id) FROM tributary.sources WHERE name = 'open'");
    std::vector<int> statuses(5);
    std::vector<std::thread> senders;
    for (int i = 0; i < 5; ++i)
        senders.emplace_back(
            [&, i] { statuses[i] = status_of(rig.post("open", R"({"id": )" + std::to_string(i) + "}")); });
    // Waits for a state, not a time: the post below must find the queue full.
    bool queued = false;
    for (int i = 0; i < 12000 && !(queued = in_flight() == 5); ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(queued);
    const auto full = rig.post("open", R"({"id": 99})");
    lock.commit();
    for (auto& t : senders) t.join();
    REQUIRE(full);
    CHECK(full->status == 503);
    CHECK(full->has_header("Retry-After"));
    CHECK(statuses == std::vector<int>(5, 201));
    CHECK(rig.stored("open") == 5);
}

TEST_CASE("receive: past --max-connections, the connection waiting longest makes room for a sender", "[receive]") {
    ReceiverRig rig({"--max-connections", "4", "--request-timeout", "60s"});
    // Eight clients that send half a head and then nothing.
    std::vector<std::unique_ptr<RawConnection>> tricklers;
    for (int i = 0; i < 8; ++i) {
        tricklers.push_back(std::make_unique<RawConnection>(rig.port));
        tricklers.back()->send("POST /sources/open/events HTTP/1.1\r\nHost: x\r\n");
        std::this_thread::sleep_for(50ms);  // (only so that they are accepted in this order)
    }
    CHECK(status_of(rig.post("open", R"({"id": 1})")) == 201);
    CHECK(rig.stored("open") == 1);
    // The oldest were cut: their reads end (with nothing) rather than wait.
    CHECK(tricklers.front()->closed_by_receiver());
}

/// Payloads of the notifications heard on one channel.
class Listener : public pqxx::notification_receiver {
public:
    Listener(pqxx::connection& c, const std::string& channel) : pqxx::notification_receiver(c, channel) {}
    void operator()(const std::string& payload, int) override { heard.push_back(payload); }
    std::vector<std::string> heard;
};

TEST_CASE("receive: a consumer group reads pushed events like any other, hinted by its herald", "[receive]") {
    ReceiverRig rig;
    run_tributary(rig.db.url(), {"group", "create", "billing", "--pattern", "open", "--from", "beginning"});
    pqxx::connection listening(rig.db.url());
    Listener hints(listening, "tributary_events");
    listening.get_notifs();  // LISTEN is sent
    REQUIRE(status_of(rig.post("open", R"([{"id": "a", "n": 1}, {"id": "b", "n": 2}])")) == 201);
    // From the herald `receive` runs (no NOTIFY in the receiver's commit): a watermark above both
    // (an earlier one may be the herald's start).
    const auto covers_both = [&] {
        for (const auto& watermark : hints.heard)
            if (rig.db.scalar("SELECT count(*) FROM tributary.events WHERE tx_id < '" + watermark + "'::xid8") == "2")
                return true;
        return false;
    };
    for (int i = 0; i < 200 && !covers_both(); ++i) listening.await_notification(0, 100000);
    CHECK(covers_both());
    const auto events = nlohmann::json::parse(
        rig.db.scalar("SELECT events FROM tributary.consumer_next('billing', 'test-consumer', 10)"));
    REQUIRE(events.size() == 2);
    CHECK(events[0].at("source") == "open");
    CHECK(events[0].at("event_key") == "a");
    CHECK(events[1].at("payload").at("n") == 2);
}

TEST_CASE("receive: SIGTERM stops accepting, answers the request in hand and exits 0", "[receive]") {
    ReceiverRig rig;
    CHECK(status_of(rig.post("open", R"({"id": 1})")) == 201);
    // The next commit waits on a lock the test holds (receiver_store takes
    // its sources' publish locks shared; the test holds this one exclusive,
    // as a removal would): the request is in hand when the signal comes.
    pqxx::connection blocker(rig.db.url());
    pqxx::work lock(blocker);
    lock.exec("SELECT pg_advisory_xact_lock(1953655138, -id) FROM tributary.sources WHERE name = 'open'");
    int in_hand = 0;
    std::thread sender([&] { in_hand = status_of(rig.post("open", R"({"id": 2})")); });
    // Waits for a state, not a time: the request must be in hand (its commit
    // waiting on the lock) when the stop comes.
    const auto waiting_on_lock = [&] {
        return rig.db.scalar("SELECT count(*) FROM pg_stat_activity WHERE usename = '" + rig.role.name() +
                             "' AND wait_event_type = 'Lock'") != "0";
    };
    bool in_commit = false;
    for (int i = 0; i < 12000 && !(in_commit = waiting_on_lock()); ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(in_commit);
    rig.receiver->signal(SIGTERM);
    wait_for_log(*rig.receiver, "stopping: no new connections");
    const int after_stop = status_of(rig.post("open", R"({"id": 3})"));
    lock.commit();
    sender.join();
    CHECK(in_hand == 201);
    CHECK(after_stop == 0);  // refused at connect: no longer listening
    CHECK(rig.receiver->wait_for(30s) == 0);
    CHECK(rig.stored("open") == 2);
}

TEST_CASE("receive: 32 keep-alive senders at once are all stored, committed in groups, and counted", "[receive]") {
    ReceiverRig rig({"--metrics-listen", "127.0.0.1:0"});
    const int metrics_port =
        std::stoi(wait_for_log(*rig.receiver, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    constexpr int kSenders = 32, kEach = 20;
    std::vector<std::vector<int>> statuses(kSenders);
    std::vector<std::thread> senders;
    for (int s = 0; s < kSenders; ++s)
        senders.emplace_back([&, s] {
            httplib::Client client("127.0.0.1", rig.port);
            client.set_keep_alive(true);
            client.set_read_timeout(60, 0);
            for (int i = 0; i < kEach; ++i) {
                const auto body = R"({"id": ")" + std::to_string(s) + "-" + std::to_string(i) + "\"}";
                statuses[s].push_back(status_of(client.Post("/sources/open/events", body, "application/json")));
            }
        });
    for (auto& t : senders) t.join();
    for (const auto& each : statuses) CHECK(each == std::vector<int>(kEach, 201));
    CHECK(rig.stored("open") == kSenders * kEach);

    httplib::Client metrics("127.0.0.1", metrics_port);
    const auto scraped = metrics.Get("/metrics");
    REQUIRE(scraped);
    CHECK_THAT(scraped->body, Catch::Contains(R"(tributary_receiver_requests_total{source="open",status="201"} 640)"));
    CHECK_THAT(scraped->body, Catch::Contains(R"(tributary_receiver_events_stored_total{source="open"} 640)"));
    CHECK_THAT(scraped->body, Catch::Contains("tributary_receiver_committed_requests_total 640"));
    CHECK_THAT(scraped->body, Catch::Contains("tributary_receiver_requests_in_flight 0"));
    const std::string metrics_file = "/tmp/tributary-receive-metrics-" + std::to_string(::getpid()) + ".txt";
    {
        std::ofstream out(metrics_file);
        out << scraped->body;
    }
    const auto promtool = run_program({"/bin/sh", "-c", "promtool check metrics < " + metrics_file});
    std::remove(metrics_file.c_str());
    INFO(promtool.out << promtool.err);
    CHECK(promtool.code == 0);
    const auto health = metrics.Get("/healthz");
    REQUIRE(health);
    CHECK(health->status == 200);
}

TEST_CASE("receive: usage errors exit 2, a port in use exits 1 naming it", "[receive]") {
    TestDatabase db;
    CHECK_THAT(run_tributary(db.url(), {"receive"}, 2).err, Catch::Contains("--listen"));
    CHECK_THAT(run_tributary(db.url(), {"receive", "--listen", "nonsense"}, 2).err, Catch::Contains("HOST:PORT"));
    CHECK_THAT(run_tributary(db.url(), {"receive", "--listen", "127.0.0.1:0", "--metrics-listen", "x"}, 2).err,
               Catch::Contains("--metrics-listen"));
    ChildProcess first(tributary_args(db.url(), {"receive", "--listen", "127.0.0.1:0"}));
    const auto port = wait_for_log(first, R"(receiving webhooks on \S+ \(port (\d+)\))");
    CHECK_THAT(run_tributary(db.url(), {"receive", "--listen", "127.0.0.1:" + port}, 1).err,
               Catch::Contains("127.0.0.1:" + port));
}

TEST_CASE("receive: a group commit holds its sources by their publish lock, not a row lock", "[receive]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "hooks", "--push", "--insecure-no-auth"});
    const auto id = db.scalar("SELECT id FROM tributary.sources WHERE name = 'hooks'");
    const auto stored = [&] { return db.scalar("SELECT count(*) FROM tributary.events WHERE source_id = " + id); };

    SECTION("two group commits at once lock no row, so make no multixact") {
        pqxx::connection a(db.url()), b(db.url());
        pqxx::work ta(a), tb(b);
        CHECK(ta.exec1(store_one(id, "k1"))[0].as<int>() == 1);
        CHECK(tb.exec1(store_one(id, "k2"))[0].as<int>() == 1);
        // Both hold the source's publish lock shared; neither locked its row
        // (a KEY SHARE lock of two transactions would put a multixact in xmax).
        CHECK(db.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock'"
                        " AND classid = 1953655138 AND objid = (4294967296 - " +
                        id + ")::oid AND granted") == "2");
        CHECK(db.scalar("SELECT xmax FROM tributary.sources WHERE id = " + id) == "0");
        ta.commit();
        tb.commit();
        CHECK(db.scalar("SELECT xmax FROM tributary.sources WHERE id = " + id) == "0");
        CHECK(stored() == "2");
    }
    SECTION("a group commit holds a remove off until it ends") {
        pqxx::connection receiver(db.url());
        pqxx::work tx(receiver);
        CHECK(tx.exec1(store_one(id, "k1"))[0].as<int>() == 1);
        ChildProcess remove(tributary_args(db.url(), {"source", "remove", "hooks"}));
        REQUIRE(wait_until([&] { return some_session_waits_for_lock(db); }, 20s));
        SECTION("it commits: the remove refuses, the source keeps its events") {
            tx.commit();
            CHECK(remove.wait_for(20s) == 1);
            CHECK_THAT(remove.err(), Catch::Contains("stored events"));
            CHECK(stored() == "1");
            CHECK(db.scalar("SELECT count(*) FROM tributary.sources WHERE name = 'hooks'") == "1");
        }
        SECTION("it rolls back: the source is removed") {
            tx.abort();
            CHECK(remove.wait_for(20s) == 0);
            CHECK(db.scalar("SELECT count(*) FROM tributary.sources WHERE name = 'hooks'") == "0");
        }
    }
    SECTION("a group commit waits for a remove in progress, then stores nothing") {
        pqxx::connection admin(db.url()), receiver(db.url());
        const int receiver_pid = receiver.backendpid();
        pqxx::work removing(admin);
        removing.exec("DELETE FROM tributary.sources WHERE name = 'hooks'");
        auto result = std::async(std::launch::async, [&] {
            pqxx::work tx(receiver);
            const bool is_null = tx.exec1(store_one(id, "k1"))[0].is_null();
            tx.commit();
            return is_null;
        });
        REQUIRE(wait_until([&] { return waits_for_lock(db, receiver_pid); }, 20s));
        removing.commit();
        CHECK(result.get());  // NULL: its source no longer takes pushes
        CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
        CHECK(db.scalar("SELECT count(*) FROM tributary.event_keys") == "0");
    }
    SECTION("in REPEATABLE READ the row is locked instead, and holds the remove off the same way") {
        pqxx::connection receiver(db.url());
        pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(receiver);
        CHECK(tx.exec1(store_one(id, "k1"))[0].as<int>() == 1);
        ChildProcess remove(tributary_args(db.url(), {"source", "remove", "hooks"}));
        REQUIRE(wait_until([&] { return some_session_waits_for_lock(db); }, 20s));
        tx.commit();
        CHECK(remove.wait_for(20s) == 1);
        CHECK_THAT(remove.err(), Catch::Contains("stored events"));
        CHECK(stored() == "1");
    }
}
