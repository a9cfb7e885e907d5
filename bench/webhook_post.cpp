// tributary-bench-webhook: GitHub-signed webhook posts to `tributary receive`,
// as fast as CONNECTIONS keep-alive senders can, one event per post.
//
//   tributary-bench-webhook URL CONNECTIONS SECONDS KEY_PREFIX [ACKNOWLEDGED_FILE]
//
// URL is the source's endpoint, http://HOST:PORT/sources/NAME/events; the
// secret is read from BENCH_WEBHOOK_SECRET. Each thread keeps one libcurl easy
// handle (so one connection, kept alive) and posts one ~250-byte event at a
// time with X-GitHub-Delivery: <a key of its own> and X-Hub-Signature-256:
// sha256=<HMAC-SHA256 of the body>, signed per post (the receiver checks it:
// the signature is in the measured path on both sides). Nothing is retried:
// a 503 is counted and the thread posts its next event.
//
// Prints one line (bench/load_run.h): requests, posts/s, p50/p99/max latency,
// a count per status, transport errors, connections opened, client CPU.
// The first answer other than 201 goes to stderr with its body (why it was refused).
// A 503 without a Retry-After header is counted as status 590 (the receiver must
// always say when to come back).
// ACKNOWLEDGED_FILE, when given, receives every key answered 201, a line each.
// Exit 1 when a sender could not start, 2 on bad usage.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <curl/curl.h>

#include "load_run.h"
#include "webhook/hmac_sha256.h"

namespace {

// The answer's body is kept (it is short): the first refused post's is shown, to say why.
size_t keep(char* data, size_t size, size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}

// Notes whether the answer had a Retry-After header (its name in any case).
size_t look_for_retry_after(char* data, size_t size, size_t count, void* seen) {
    const std::string_view line(data, size * count);
    constexpr std::string_view name = "retry-after:";
    if (line.size() >= name.size() && std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
        }))
        *static_cast<bool*>(seen) = true;
    return size * count;
}

// One sender: its own easy handle, whose connection libcurl keeps alive between posts.
class Sender {
public:
    Sender(const std::string& url, const std::string& secret) : curl_(curl_easy_init()), secret_(secret) {
        if (!curl_) throw std::runtime_error("curl_easy_init failed");
        curl_easy_setopt(curl_.get(), CURLOPT_URL, url.c_str());
        curl_easy_setopt(curl_.get(), CURLOPT_POST, 1L);
        curl_easy_setopt(curl_.get(), CURLOPT_WRITEFUNCTION, keep);
        curl_easy_setopt(curl_.get(), CURLOPT_WRITEDATA, &answer_);
        curl_easy_setopt(curl_.get(), CURLOPT_HEADERFUNCTION, look_for_retry_after);
        curl_easy_setopt(curl_.get(), CURLOPT_HEADERDATA, &retry_after_);
        curl_easy_setopt(curl_.get(), CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl_.get(), CURLOPT_TCP_NODELAY, 1L);
        // A stuck receiver shows as errors, not as a benchmark that never ends.
        curl_easy_setopt(curl_.get(), CURLOPT_TIMEOUT, 30L);
    }
    // Never moved: libcurl holds the addresses of answer_ and retry_after_ (run_load builds it in place).
    Sender(Sender&&) = delete;
    Sender& operator=(Sender&&) = delete;

    int send(const std::string& key, long long n, std::string& error) {
        const std::string body = bench::event_payload(key, n);
        const std::string signature =
            "X-Hub-Signature-256: sha256=" + tributary::webhook::to_hex(tributary::webhook::hmac_sha256(secret_, body));
        const std::string delivery = "X-GitHub-Delivery: " + key;
        curl_slist* headers = nullptr;
        headers = curl_slist_append(headers, "Content-Type: application/json");
        headers = curl_slist_append(headers, "Expect:");  // never wait for 100-continue
        headers = curl_slist_append(headers, signature.c_str());
        headers = curl_slist_append(headers, delivery.c_str());
        curl_easy_setopt(curl_.get(), CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl_.get(), CURLOPT_POSTFIELDS, body.c_str());
        curl_easy_setopt(curl_.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
        answer_.clear();
        retry_after_ = false;
        const CURLcode code = curl_easy_perform(curl_.get());
        curl_slist_free_all(headers);
        if (code != CURLE_OK) {
            if (error.empty()) error = curl_easy_strerror(code);
            return -1;
        }
        long status = 0;
        curl_easy_getinfo(curl_.get(), CURLINFO_RESPONSE_CODE, &status);
        long opened = 0;
        curl_easy_getinfo(curl_.get(), CURLINFO_NUM_CONNECTS, &opened);
        connects_ += opened;
        if (status != 201 && error.empty()) error = "HTTP " + std::to_string(status) + ": " + answer_;
        if (status == 503 && !retry_after_) return 590;
        return static_cast<int>(status);
    }

    long long connects() const { return connects_; }

private:
    struct Cleanup {
        void operator()(CURL* c) const { curl_easy_cleanup(c); }
    };
    std::unique_ptr<CURL, Cleanup> curl_;
    std::string secret_;
    std::string answer_;
    bool retry_after_ = false;
    long long connects_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || argc > 6) {
        std::fprintf(stderr, "usage: tributary-bench-webhook URL CONNECTIONS SECONDS KEY_PREFIX [ACKNOWLEDGED_FILE]\n");
        return 2;
    }
    const char* secret = std::getenv("BENCH_WEBHOOK_SECRET");
    if (!secret || !*secret) {
        std::fprintf(stderr, "tributary-bench-webhook: set BENCH_WEBHOOK_SECRET to the source's secret\n");
        return 2;
    }
    const std::string url = argv[1];
    bench::Options options;
    options.connections = std::atoi(argv[2]);
    options.seconds = std::atof(argv[3]);
    options.key_prefix = argv[4];
    if (argc == 6) options.acknowledged_file = argv[5];
    if (options.connections < 1 || options.seconds <= 0) {
        std::fprintf(stderr, "tributary-bench-webhook: CONNECTIONS and SECONDS must be positive\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const int rc = bench::run_load(options, [&](int) { return Sender(url, secret); });
    curl_global_cleanup();
    return rc;
}
