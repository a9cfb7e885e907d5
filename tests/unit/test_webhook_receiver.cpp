// `tributary receive`'s core (src/webhook/webhook_receiver) over the fakes:
// every status a sender can get, signatures checked before anything is
// stored, a request's events all or nothing, the queue and the database's
// outages answered 503 with Retry-After, the catalogue's refresh.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/fake_pushed_events.h"
#include "webhook/hmac_sha256.h"
#include "webhook/refusal_log.h"
#include "webhook/webhook_receiver.h"

using namespace tributary::webhook;
using std::chrono::seconds;
using std::chrono::system_clock;
using tributary::fakes::FakePushedEventStore;
using tributary::fakes::FakePushedSources;

namespace {

const system_clock::time_point kNow{seconds(1700000000)};
const std::string kGithubSecret = "It's a Secret to Everybody";
const std::string kStripeSecret = "whsec_test";
const std::string kToken = "s3cr3t-token";

enum Id { open_id = 1, github_id, stripe_id, bearer_id, paused_id, broken_id, small_id, unset_id };

PushedSource source(int id, std::string name) {
    PushedSource out;
    out.id = id;
    out.name = std::move(name);
    return out;
}

PushedSource signed_by(int id, std::string name, SignatureScheme scheme, std::string variable) {
    PushedSource out = source(id, std::move(name));
    out.auth.method = PushAuthentication::Method::signature;
    out.auth.name = scheme.format == SignatureScheme::Format::stripe ? "stripe" : "github";
    out.auth.signature = std::move(scheme);
    out.auth.variable = std::move(variable);
    return out;
}

std::vector<PushedSource> all_sources() {
    std::vector<PushedSource> out;
    out.push_back(source(open_id, "open"));
    out.push_back(signed_by(github_id, "github", github_signature(), "GITHUB_SECRET"));
    out.push_back(signed_by(stripe_id, "stripe", stripe_signature(), "STRIPE_SECRET"));
    PushedSource bearer = source(bearer_id, "bearer");
    bearer.auth.method = PushAuthentication::Method::bearer;
    bearer.auth.name = "bearer";
    bearer.auth.variable = "TOKEN";
    out.push_back(bearer);
    PushedSource paused = source(paused_id, "paused");
    paused.enabled = false;
    out.push_back(paused);
    PushedSource broken = source(broken_id, "broken");
    broken.misconfigured = "unknown authentication method 'rot13'";
    out.push_back(broken);
    PushedSource small = source(small_id, "small");
    small.max_body_bytes = 16;
    out.push_back(small);
    out.push_back(signed_by(unset_id, "unset", github_signature(), "NOT_SET"));
    return out;
}

class RecordingObserver : public ReceiverObserver {
public:
    struct Answer {
        std::string source;
        int status;
        std::size_t stored;
    };
    void answered(const std::string& source, int status, std::size_t stored) override {
        std::lock_guard lock(mutex_);
        answers.push_back({source, status, stored});
    }
    void committed(std::size_t requests, std::size_t events) override {
        std::lock_guard lock(mutex_);
        commits.emplace_back(requests, events);
    }
    std::vector<Answer> answers;
    std::vector<std::pair<std::size_t, std::size_t>> commits;

private:
    std::mutex mutex_;
};

using Headers = std::map<std::string, std::string>;

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

struct Rig {
    explicit Rig(WebhookReceiver::Options options = quick()) : catalog(all_sources()) {
        receiver = std::make_unique<WebhookReceiver>(
            catalog, store, options,
            [](const std::string& name) -> std::optional<std::string> {
                if (name == "GITHUB_SECRET") return kGithubSecret;
                if (name == "STRIPE_SECRET") return kStripeSecret;
                if (name == "TOKEN") return kToken;
                return std::nullopt;
            },
            [] { return kNow; }, &observer);
    }

    static WebhookReceiver::Options quick() {
        WebhookReceiver::Options options;
        options.refresh_every = std::chrono::milliseconds(0);
        options.retry_after = seconds(2);
        return options;
    }

    Reply post(const std::string& name, const std::string& body, Headers headers = {},
               const std::string& content_type = "application/json", const std::string& method = "POST") {
        return call(method, "/sources/" + name + "/events", body, std::move(headers), content_type);
    }

    Reply call(const std::string& method, const std::string& path, const std::string& body, Headers headers = {},
               const std::string& content_type = "application/json") {
        Headers lowered;
        for (auto& [name, value] : headers) lowered[lower(name)] = value;
        IncomingRequest request;
        request.method = method;
        request.path = path;
        request.body = body;
        request.content_type = content_type;
        request.header = [lowered](std::string_view name) -> std::optional<std::string> {
            const auto it = lowered.find(lower(std::string(name)));
            if (it == lowered.end()) return std::nullopt;
            return it->second;
        };
        return receiver->handle(request);
    }

    FakePushedSources catalog;
    FakePushedEventStore store;
    RecordingObserver observer;
    std::unique_ptr<WebhookReceiver> receiver;
};

nlohmann::json json_of(const Reply& reply) { return nlohmann::json::parse(reply.body); }

std::string error_of(const Reply& reply) { return json_of(reply).at("error").get<std::string>(); }

void check_stored(const Reply& reply, int status, std::size_t stored, std::size_t duplicates) {
    CHECK(reply.status == status);
    const auto body = json_of(reply);
    CHECK(body.at("stored") == stored);
    CHECK(body.at("duplicates") == duplicates);
    CHECK_FALSE(reply.retry_after);
}

void check_503(const Reply& reply) {
    CHECK(reply.status == 503);
    REQUIRE(reply.retry_after);
    CHECK(*reply.retry_after == seconds(2));
    CHECK_FALSE(error_of(reply).empty());
}

Headers github_headers(const std::string& secret, const std::string& body) {
    return {{"X-Hub-Signature-256", "sha256=" + to_hex(hmac_sha256(secret, body))}};
}

Headers stripe_headers(const std::string& secret, const std::string& body, system_clock::time_point at) {
    const auto t = std::to_string(std::chrono::duration_cast<seconds>(at.time_since_epoch()).count());
    return {{"Stripe-Signature", "t=" + t + ",v1=" + to_hex(hmac_sha256(secret, t + "." + body))}};
}

}  // namespace

TEST_CASE("receiver: the path and method", "[webhook]") {
    Rig rig;
    CHECK(rig.post("open", "{\"id\":1}", {}, "application/json", "GET").status == 405);
    CHECK(rig.post("open", "{\"id\":1}", {}, "application/json", "PUT").status == 405);
    CHECK(rig.call("POST", "/sources/open", "{\"id\":1}").status == 404);
    CHECK(rig.call("POST", "/sources/open/events/", "{\"id\":1}").status == 404);
    CHECK(rig.call("POST", "/sources/a/b/events", "{\"id\":1}").status == 404);
    CHECK(rig.call("POST", "/", "").status == 404);
    CHECK(rig.post("nosuch", "{\"id\":1}").status == 404);
    CHECK(rig.post("bad%20name", "{\"id\":1}").status == 404);
    CHECK(rig.post(std::string(101, 'a'), "{\"id\":1}").status == 404);
    CHECK(error_of(rig.post("nosuch", "{}")) == "no pushed source named nosuch");
    CHECK(rig.store.calls().empty());
    for (const auto& answer : rig.observer.answers) CHECK(answer.source.empty());
}

TEST_CASE("receiver: stored is 201, a repeat 200, both saying what they stored", "[webhook]") {
    Rig rig;
    check_stored(rig.post("open", "[{\"id\":1},{\"id\":2},{\"id\":1}]"), 201, 2, 1);
    check_stored(rig.post("open", "{\"id\":2}"), 200, 0, 1);
    check_stored(rig.post("open", "{\"id\":\"x\"}\n{\"id\":3}\n", {}, "application/x-ndjson"), 201, 2, 0);
    check_stored(rig.post("open", "[]"), 200, 0, 0);
    CHECK(rig.store.calls().size() == 3);  // the empty array stored nothing, with no transaction
    CHECK(rig.store.events(open_id).at("1") == "{\"id\":1}");
    CHECK(rig.store.stored(open_id) == 4);

    REQUIRE(rig.observer.answers.size() == 4);
    CHECK(rig.observer.answers[0].source == "open");
    CHECK(rig.observer.answers[0].status == 201);
    CHECK(rig.observer.answers[0].stored == 2);
    CHECK(rig.observer.answers[1].status == 200);
    CHECK(rig.observer.commits.size() == 3);
    CHECK(rig.observer.commits[0] == std::make_pair(std::size_t{1}, std::size_t{3}));
}

TEST_CASE("receiver: the key header keys the request's events", "[webhook]") {
    Rig rig;
    check_stored(rig.post("open", "{\"no\":\"id\"}", {{"idempotency-key", "d-1"}}), 201, 1, 0);
    check_stored(rig.post("open", "{\"other\":\"body\"}", {{"Idempotency-Key", "d-1"}}), 200, 0, 1);
    check_stored(rig.post("open", "[{},{}]", {{"Idempotency-Key", "d-2"}}), 201, 2, 0);
    const auto stored = rig.store.events(open_id);
    CHECK(stored.count("d-1") == 1);
    CHECK(stored.count("d-2#0") == 1);
    CHECK(stored.count("d-2#1") == 1);
}

TEST_CASE("receiver: GitHub's signature, and every tampering refused with nothing stored", "[webhook]") {
    Rig rig;
    const std::string body = "{\"id\":\"delivery-1\",\"action\":\"opened\"}";
    check_stored(rig.post("github", body, github_headers(kGithubSecret, body)), 201, 1, 0);
    check_stored(rig.post("github", body, github_headers(kGithubSecret, body)), 200, 0, 1);  // redelivery

    const std::string other = "{\"id\":\"delivery-2\",\"action\":\"opened\"}";
    std::string changed = other;
    changed[changed.size() - 3] ^= 1;  // one byte
    const auto refused = {
        rig.post("github", changed, github_headers(kGithubSecret, other)),
        rig.post("github", other, github_headers("another secret", other)),
        rig.post("github", other),
        rig.post("github", other, {{"X-Hub-Signature-256", "sha1=abc"}}),
        rig.post("github", other, stripe_headers(kGithubSecret, other, kNow)),
    };
    for (const Reply& reply : refused) {
        CHECK(reply.status == 401);
        CHECK_FALSE(reply.retry_after);
    }
    CHECK(error_of(refused.begin()[0]) ==
          "the X-Hub-Signature-256 header is not the body's signature with this source's secret");
    CHECK(error_of(refused.begin()[2]) == "no X-Hub-Signature-256 header: the request is not signed");
    CHECK(rig.store.stored(github_id) == 1);
    CHECK(rig.store.calls().size() == 2);
}

TEST_CASE("receiver: Stripe's signature, a stale one refused", "[webhook]") {
    Rig rig;
    const std::string body = "{\"id\":\"evt_1\",\"type\":\"charge.succeeded\"}";
    check_stored(rig.post("stripe", body, stripe_headers(kStripeSecret, body, kNow - seconds(60))), 201, 1, 0);

    const std::string other = "{\"id\":\"evt_2\",\"type\":\"charge.succeeded\"}";
    const Reply stale = rig.post("stripe", other, stripe_headers(kStripeSecret, other, kNow - seconds(301)));
    CHECK(stale.status == 401);
    CHECK(error_of(stale).find("(a replay?)") != std::string::npos);
    CHECK(rig.post("stripe", other, stripe_headers(kStripeSecret, other, kNow + seconds(301))).status == 401);
    CHECK(rig.post("stripe", other + " ", stripe_headers(kStripeSecret, other, kNow)).status == 401);
    CHECK(rig.post("stripe", other, stripe_headers("whsec_other", other, kNow)).status == 401);
    CHECK(rig.post("stripe", other).status == 401);
    CHECK(rig.store.stored(stripe_id) == 1);
}

TEST_CASE("receiver: a bearer token", "[webhook]") {
    Rig rig;
    check_stored(rig.post("bearer", "{\"id\":1}", {{"Authorization", "Bearer " + kToken}}), 201, 1, 0);
    check_stored(rig.post("bearer", "{\"id\":1}", {{"Authorization", "bearer " + kToken}}), 200, 0, 1);
    CHECK(rig.post("bearer", "{\"id\":2}", {{"Authorization", "Bearer " + kToken + "x"}}).status == 401);
    CHECK(rig.post("bearer", "{\"id\":2}", {{"Authorization", "Basic " + kToken}}).status == 401);
    CHECK(rig.post("bearer", "{\"id\":2}", {{"Authorization", "Bearer"}}).status == 401);
    CHECK(rig.post("bearer", "{\"id\":2}").status == 401);
    CHECK(rig.store.stored(bearer_id) == 1);
}

TEST_CASE("receiver: 503 with Retry-After for the operator's problems", "[webhook]") {
    Rig rig;
    const std::string body = "{\"id\":1}";
    SECTION("the secret's variable is not set") {
        const Reply reply = rig.post("unset", body, github_headers("", body));
        check_503(reply);
        CHECK(error_of(reply).find("NOT_SET") != std::string::npos);
    }
    SECTION("paused") {
        check_503(rig.post("paused", body));
        CHECK(error_of(rig.post("paused", body)) == "source paused is paused");
    }
    SECTION("misconfigured") { check_503(rig.post("broken", body)); }
    SECTION("key pointers that key nothing") {
        auto sources = all_sources();
        sources[0].key = {"no-slash"};
        rig.catalog.set(sources);
        check_503(rig.post("open", body));
    }
    CHECK(rig.store.calls().empty());
}

TEST_CASE("receiver: 413 over the source's body limit, 400 for a body it cannot store", "[webhook]") {
    Rig rig;
    CHECK(rig.post("small", "{\"id\":\"0123456789\"}").status == 413);
    check_stored(rig.post("small", "{\"id\":\"012\"}"), 201, 1, 0);
    CHECK(rig.receiver->largest_body_bytes() == kDefaultMaxBodyBytes);

    const Reply missing = rig.post("open", "[{\"id\":1},{\"id\":2},{\"name\":\"no id\"}]");
    CHECK(missing.status == 400);
    CHECK(error_of(missing) == "event #2: key /id is missing");
    CHECK(rig.store.stored(open_id) == 0);  // all or nothing
}

TEST_CASE("receiver: hostile bodies are 400, stored nowhere, and answered with valid JSON", "[webhook]") {
    Rig rig;
    const std::string hostile[] = {
        std::string(100000, '[') + std::string(100000, ']'),
        std::string("{\"id\":1,\"a\":\"\0\"}", 16),
        "{\"id\":1,\"a\":\"\xff\xfe\"}",
        "{\"id\":1,\"a\":\"\\u0000\"}",
        "{\"id\":\"\xc0\xaf\"}",
        "{\"id\":1,\"n\":1e999999}",
        "{\"id\":1}{\"id\":2}",
        "",
        "\xef\xbb\xbf",
    };
    for (const std::string& body : hostile) {
        const Reply reply = rig.post("open", body);
        CHECK(reply.status == 400);
        CHECK_NOTHROW(json_of(reply));
    }
    CHECK(rig.store.calls().empty());
}

TEST_CASE("receiver: the queue full is 503 at once; the database unavailable is 503", "[webhook]") {
    WebhookReceiver::Options options = Rig::quick();
    options.max_queued_events = 1;
    Rig rig(options);
    rig.store.hold();
    Reply first;
    std::thread sender([&] { first = rig.post("open", "{\"id\":1}"); });
    rig.store.wait_for_calls(1);
    check_503(rig.post("open", "{\"id\":2}"));  // on this thread: it must not wait for the held commit
    rig.store.release();
    sender.join();
    CHECK(first.status == 201);

    rig.store.set_unavailable(true);
    const Reply down = rig.post("open", "{\"id\":3}");
    check_503(down);
    CHECK(error_of(down) == "the database is unavailable; retry later");
    rig.store.set_unavailable(false);
    check_stored(rig.post("open", "{\"id\":3}"), 201, 1, 0);
}

TEST_CASE("receiver: one request of more events than the queue holds is 413, saying the limit and its flag",
          "[webhook]") {
    WebhookReceiver::Options options = Rig::quick();
    options.max_queued_events = 3;
    Rig rig(options);
    const Reply over = rig.post("open", "[{\"id\":1},{\"id\":2},{\"id\":3},{\"id\":4}]");
    CHECK(over.status == 413);
    CHECK_FALSE(over.retry_after);  // retrying it alone would never help
    CHECK(error_of(over) ==
          "the request holds 4 events, more than the 3 the receiver queues (its --max-queued-events): send them in "
          "smaller requests");
    CHECK(rig.store.calls().empty());
    check_stored(rig.post("open", "[{\"id\":1},{\"id\":2},{\"id\":3}]"), 201, 3, 0);  // at the limit: taken
}

TEST_CASE("receiver: a source the store no longer takes is 503, and the catalogue read again", "[webhook]") {
    WebhookReceiver::Options options = Rig::quick();
    options.refresh_every = std::chrono::hours(1);
    Rig rig(options);
    check_stored(rig.post("open", "{\"id\":1}"), 201, 1, 0);
    const std::size_t reads = rig.catalog.reads();
    rig.store.set_accepting(open_id, false);
    auto sources = all_sources();
    sources.erase(sources.begin());  // removed
    rig.catalog.set(sources);
    check_503(rig.post("open", "{\"id\":2}"));
    CHECK(rig.post("open", "{\"id\":2}").status == 404);
    CHECK(rig.catalog.reads() > reads);
}

TEST_CASE("receiver: the catalogue, kept when a read fails, read soon for an unknown name", "[webhook]") {
    SECTION("a read failing keeps the last good one") {
        Rig rig;
        check_stored(rig.post("open", "{\"id\":1}"), 201, 1, 0);
        rig.catalog.set_unavailable(true);
        check_stored(rig.post("open", "{\"id\":2}"), 201, 1, 0);
        CHECK(rig.post("nosuch", "{\"id\":2}").status == 404);
    }
    SECTION("never read: 503") {
        FakePushedSources catalog;
        catalog.set_unavailable(true);
        FakePushedEventStore store;
        WebhookReceiver receiver(
            catalog, store, Rig::quick(), [](const std::string&) { return std::nullopt; }, [] { return kNow; });
        IncomingRequest request;
        request.method = "POST";
        request.path = "/sources/open/events";
        request.body = "{\"id\":1}";
        check_503(receiver.handle(request));
    }
    SECTION("a source added is found without waiting for the next refresh") {
        WebhookReceiver::Options options = Rig::quick();
        options.refresh_every = std::chrono::hours(1);
        Rig rig(options);
        CHECK(rig.post("later", "{\"id\":1}").status == 404);
        auto sources = all_sources();
        sources.push_back(source(42, "later"));
        rig.catalog.set(sources);
        // At most one read per 100 ms for unknown names: retried until read.
        Reply reply;
        do reply = rig.post("later", "{\"id\":1}");
        while (reply.status == 404);
        check_stored(reply, 201, 1, 0);
        CHECK(rig.catalog.reads() < 1000);
    }
}

TEST_CASE("receiver: a refusal's log line at most once a second per source, the rest counted", "[webhook]") {
    RefusalLog log(seconds(1));
    const RefusalLog::Clock::time_point t0{};
    CHECK(log.admit("a", t0) == std::optional<std::size_t>(0));
    CHECK_FALSE(log.admit("a", t0 + std::chrono::milliseconds(10)));
    CHECK_FALSE(log.admit("a", t0 + std::chrono::milliseconds(999)));
    CHECK(log.admit("b", t0 + std::chrono::milliseconds(999)) == std::optional<std::size_t>(0));
    CHECK(log.admit("a", t0 + seconds(1)) == std::optional<std::size_t>(2));
    CHECK_FALSE(log.admit("a", t0 + seconds(1)));
}

TEST_CASE("receiver: many senders at once each get their own answer", "[webhook]") {
    Rig rig;
    constexpr int kSenders = 8, kEach = 25;
    std::vector<std::vector<int>> statuses(kSenders);
    std::vector<std::thread> senders;
    for (int s = 0; s < kSenders; ++s) {
        senders.emplace_back([&, s] {
            for (int i = 0; i < kEach; ++i) {
                // Every key twice, by two senders: one of them stores it.
                const int key = (s / 2) * kEach + i;
                statuses[s].push_back(rig.post("open", "{\"id\":" + std::to_string(key) + "}").status);
            }
        });
    }
    for (auto& sender : senders) sender.join();
    std::size_t created = 0;
    for (const auto& each : statuses) {
        for (const int status : each) {
            CHECK((status == 201 || status == 200));
            if (status == 201) ++created;
        }
    }
    CHECK(created == kSenders / 2 * kEach);
    CHECK(rig.store.stored(open_id) == kSenders / 2 * kEach);
    std::size_t committed = 0;
    for (const auto& [requests, events] : rig.observer.commits) committed += requests;
    CHECK(committed == kSenders * kEach);
}
