#include "support/concurrent_consumers.h"

#include <chrono>
#include <random>
#include <thread>

namespace tributary::testing {

namespace {

constexpr int kTransactions = 150;
constexpr int kPerTransaction = 20;
static_assert(kEventsLoaded == 2 * kTransactions * kPerTransaction);

void load(const TestDatabase& db, int source, int seed, ConcurrentTally& tally) {
    try {
        pqxx::connection connection(db.url());
        std::mt19937 random(static_cast<unsigned>(seed));
        for (int t = 0; t < kTransactions; ++t) {
            pqxx::work tx(connection);
            insert_events(tx, source, t * kPerTransaction + 1, kPerTransaction / 2);
            std::this_thread::sleep_for(std::chrono::microseconds(random() % 3000));
            insert_events(tx, source, t * kPerTransaction + 1 + kPerTransaction / 2, kPerTransaction / 2);
            tx.commit();
        }
    } catch (const std::exception& e) {
        tally.problem(std::string("loader: ") + e.what());
    }
}

}  // namespace

void ConcurrentTally::acked(const Batch& batch) {
    std::lock_guard<std::mutex> lock(mutex_);
    acked_.insert(acked_.end(), batch.seqs.begin(), batch.seqs.end());
}

void ConcurrentTally::problem(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    problems_.push_back(text);
}

std::size_t ConcurrentTally::acked_count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return acked_.size();
}

bool ConcurrentTally::has_problems() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return !problems_.empty();
}

std::vector<std::int64_t> ConcurrentTally::acked_seqs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return acked_;
}

std::vector<std::string> ConcurrentTally::problems() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return problems_;
}

void run_two_loaders_four_consumers(const TestDatabase& db, const ConsumerLoop& loop, ConcurrentTally& tally) {
    const int sources[] = {add_source(db, "one"), add_source(db, "two")};
    db.exec("SELECT tributary.group_create('g')");
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int l = 0; l < 2; ++l) threads.emplace_back([&, l] { load(db, sources[l], l, tally); });
    for (int c = 0; c < 4; ++c)
        threads.emplace_back([&, c] {
            try {
                Consumer consumer(db.url(), "g", "c" + std::to_string(c));
                loop(consumer, stop, tally);
            } catch (const std::exception& e) {
                tally.problem(std::string("consumer: ") + e.what());
            }
        });

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (tally.acked_count() < static_cast<std::size_t>(kEventsLoaded) && !tally.has_problems() &&
           std::chrono::steady_clock::now() <= deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // anything more would be a duplicate
    stop = true;
    for (auto& t : threads) t.join();
}

}  // namespace tributary::testing
