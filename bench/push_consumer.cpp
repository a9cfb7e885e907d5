// tributary-bench-push-consumer: a consumer of one group woken by the herald, whose handler
// costs nothing (bench/push, issue 27: commit -> handler latency without a process per batch).
//
//   tributary-bench-push-consumer URL GROUP BATCH OUT_FILE [FALLBACK_MS]
//
// Two connections, as `tributary consume` has: one LISTENs on tributary_events and sleeps on its
// socket; the other reads with consumer_next(GROUP, 'bench', BATCH, previous batch, its token),
// which acks the previous batch. It reads once at start, again at once after a full batch, on
// every hint, and after FALLBACK_MS (default 5000) without one. The handler writes the moment
// consumer_next returned a batch (unix µs) on a line of its own, then one line {"seq":N} per
// event, to OUT_FILE: the format of bench/push's stamping handler, joined there to each event's
// commit time. Stops on SIGTERM or SIGINT, and prints to stderr:
//   hints=<notifications received> reads=<consumer_next calls> empty=<reads that found nothing>
//   events=<handled> batches=<n>
// Exit 1 on a database error or a refused ack, 2 on bad usage.
#include <sys/select.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <pqxx/pqxx>

#include "postgres/batch_events_json.h"

namespace {

volatile std::sig_atomic_t stop_requested = 0;

void request_stop(int) { stop_requested = 1; }

// Installed without SA_RESTART, so that a signal ends the select() it interrupts.
void on_stop_signals() {
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
}

long long unix_micros() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

struct Counts {
    long long hints = 0;
    long long reads = 0;
    long long empty = 0;
    long long events = 0;
    long long batches = 0;
};

class HintCounter : public pqxx::notification_receiver {
public:
    HintCounter(pqxx::connection_base& connection, long long& hints)
        : pqxx::notification_receiver(connection, "tributary_events"), hints_(hints) {}
    void operator()(const std::string&, int) override { ++hints_; }

private:
    long long& hints_;
};

// Waits until the listening connection's socket is readable (then takes its notifications), a
// signal, or `timeout_ms`. True when at least one hint came.
bool await_hint(pqxx::connection& listener, int timeout_ms, Counts& counts) {
    const long long before = counts.hints;
    if (listener.get_notifs() > 0) return true;  // already here
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(listener.sock(), &readable);
    timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    const int ready = select(listener.sock() + 1, &readable, nullptr, nullptr, &timeout);
    if (ready < 0 && errno != EINTR) throw std::runtime_error("select on the listening connection failed");
    if (ready > 0) listener.get_notifs();
    return counts.hints > before;
}

// consumer_next, acking the previous batch; the handler is the stamp and the seqs.
class Reader {
public:
    Reader(pqxx::connection& connection, std::string group, int batch, std::FILE* out)
        : connection_(connection), group_(std::move(group)), batch_(batch), out_(out) {
        connection_.prepare("next",
                            "SELECT batch_id, lease_token::text, events::text, previous_acked"
                            " FROM tributary.consumer_next($1, 'bench', $2, $3, $4::uuid)");
    }

    // One read; returns how many events it handled.
    long long read(Counts& counts) {
        pqxx::nontransaction tx(connection_);
        const auto row = tx.exec_prepared1("next", group_, batch_, previous_id_, previous_token_);
        const long long handled_us = unix_micros();
        ++counts.reads;
        if (previous_id_ && !row[3].as<bool>()) throw std::runtime_error("an ack was refused");
        previous_id_.reset();
        previous_token_.reset();
        if (row[0].is_null()) {
            ++counts.empty;
            return 0;
        }
        previous_id_ = row[0].as<long long>();
        previous_token_ = row[1].as<std::string>();
        const auto events = tributary::postgres::read_batch_events(std::string_view(row[2].c_str(), row[2].size()));
        std::fprintf(out_, "%lld\n", handled_us);
        for (const auto& e : events) std::fprintf(out_, "{\"seq\":%lld}\n", static_cast<long long>(e.seq));
        std::fflush(out_);
        ++counts.batches;
        counts.events += static_cast<long long>(events.size());
        return static_cast<long long>(events.size());
    }

private:
    pqxx::connection& connection_;
    std::string group_;
    int batch_;
    std::FILE* out_;
    std::optional<long long> previous_id_;
    std::optional<std::string> previous_token_;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || argc > 6) {
        std::fprintf(stderr, "usage: tributary-bench-push-consumer URL GROUP BATCH OUT_FILE [FALLBACK_MS]\n");
        return 2;
    }
    const std::string url = argv[1];
    const int batch = std::atoi(argv[3]);
    const int fallback_ms = argc == 6 ? std::atoi(argv[5]) : 5000;
    if (batch <= 0 || fallback_ms <= 0) {
        std::fprintf(stderr, "tributary-bench-push-consumer: BATCH and FALLBACK_MS must be positive\n");
        return 2;
    }
    std::FILE* out = std::fopen(argv[4], "a");
    if (!out) {
        std::perror(argv[4]);
        return 2;
    }
    on_stop_signals();
    Counts counts;
    int rc = 0;
    try {
        pqxx::connection listener(url);
        pqxx::connection reading(url);
        HintCounter hints(listener, counts.hints);
        Reader reader(reading, argv[2], batch, out);
        bool read_now = true;  // at start: hints sent before the LISTEN are lost
        while (!stop_requested) {
            if (read_now) {
                const long long n = reader.read(counts);
                read_now = n == batch;  // a full batch: more may wait
                continue;
            }
            // Hint or fallback: read either way (a hint only makes it sooner).
            await_hint(listener, fallback_ms, counts);
            read_now = !stop_requested;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tributary-bench-push-consumer: %s\n", e.what());
        rc = 1;
    }
    std::fclose(out);
    std::fprintf(stderr, "hints=%lld reads=%lld empty=%lld events=%lld batches=%lld\n", counts.hints, counts.reads,
                 counts.empty, counts.events, counts.batches);
    return rc;
}
