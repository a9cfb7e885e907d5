// tributary-bench-consume: drain consumer groups with the plain SQL API, as
// any client would, and say how fast. The handler does nothing.
//
//   tributary-bench-consume URL BATCH CONSUMERS GROUP...
//
// Starts CONSUMERS threads per GROUP, each with its own connection, each
// looping consumer_read(GROUP, name, BATCH) then consumer_ack(batch, token)
// until three reads in a row (10 ms apart) found nothing. Prints one line per
// group:
//   group=<name> consumers=<n> events=<acked> batches=<n> lost_acks=<n> seconds=<first read to last ack>
// Exit 1 on a database error.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
    std::mutex mutex;
    long long events = 0;
    long long batches = 0;
    long long lost_acks = 0;
    Clock::time_point last_ack{};
};

void consume(const std::string& url, const std::string& group, const std::string& name, int batch, Tally& tally,
             std::atomic<bool>& failed) {
    try {
        pqxx::connection connection(url);
        connection.prepare(
            "read", "SELECT batch_id, lease_token::text, seq, payload::text FROM tributary.consumer_read($1, $2, $3)");
        connection.prepare("ack", "SELECT tributary.consumer_ack($1, $2::uuid)");
        int idle = 0;
        while (idle < 3) {
            long long id = 0;
            std::string token;
            std::size_t rows = 0;
            {
                pqxx::nontransaction tx(connection);
                const auto result = tx.exec_prepared("read", group, name, batch);
                rows = result.size();
                if (rows > 0) {
                    id = result[0][0].as<long long>();
                    token = result[0][1].as<std::string>();
                    std::size_t bytes = 0;  // "handle" the events: touch every payload
                    for (const auto& row : result) bytes += row[3].size();
                    if (bytes == 0) std::abort();
                }
            }
            if (rows == 0) {
                ++idle;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
                continue;
            }
            idle = 0;
            bool acked = false;
            {
                pqxx::nontransaction tx(connection);
                acked = tx.exec_prepared("ack", id, token)[0][0].as<bool>();
            }
            std::lock_guard<std::mutex> lock(tally.mutex);
            if (acked) {
                tally.events += static_cast<long long>(rows);
                ++tally.batches;
                tally.last_ack = std::max(tally.last_ack, Clock::now());
            } else {
                ++tally.lost_acks;
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tributary-bench-consume: %s (%s): %s\n", group.c_str(), name.c_str(), e.what());
        failed = true;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: tributary-bench-consume URL BATCH CONSUMERS GROUP...\n");
        return 2;
    }
    const std::string url = argv[1];
    const int batch = std::atoi(argv[2]);
    const int consumers = std::atoi(argv[3]);
    std::vector<std::string> groups(argv + 4, argv + argc);
    std::vector<Tally> tallies(groups.size());
    std::atomic<bool> failed{false};

    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (int c = 0; c < consumers; ++c)
            threads.emplace_back(consume, url, groups[g], "bench-" + std::to_string(c), batch, std::ref(tallies[g]),
                                 std::ref(failed));
    for (auto& t : threads) t.join();

    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto& t = tallies[g];
        const double seconds = t.batches ? std::chrono::duration<double>(t.last_ack - start).count() : 0.0;
        std::printf("group=%s consumers=%d events=%lld batches=%lld lost_acks=%lld seconds=%.3f\n", groups[g].c_str(),
                    consumers, t.events, t.batches, t.lost_acks, seconds);
    }
    return failed ? 1 : 0;
}
