#pragma once

// Loaders and consumers of one group at once, as the tests of consumer_read
// and of consumer_next both run them: only how a consumer reads and acks
// differs.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "support/group_consumer.h"
#include "support/test_database.h"

namespace tributary::testing {

/// What the consumers of a concurrent run report, from any thread (Catch's
/// assertions are for the test's thread only).
class ConcurrentTally {
public:
    void acked(const Batch& batch);
    void problem(const std::string& text);
    std::size_t acked_count() const;
    bool has_problems() const;
    std::vector<std::int64_t> acked_seqs() const;
    std::vector<std::string> problems() const;

private:
    mutable std::mutex mutex_;
    std::vector<std::int64_t> acked_;
    std::vector<std::string> problems_;
};

/// One consumer's loop: reads and acks through `consumer` (named "c0".."c3",
/// of group "g") until `stop`, telling `tally` every batch acked and every
/// problem; exceptions it throws are told as problems too.
using ConsumerLoop = std::function<void(Consumer& consumer, const std::atomic<bool>& stop, ConcurrentTally& tally)>;

/// Creates sources "one" and "two" and group "g" (defaults), then has two
/// loaders commit 150 transactions of 20 events each, each transaction in two
/// halves with a pause between (so that they overlap and commit out of seq
/// order), while four consumers run `loop`. Returns once every event is acked
/// or a problem was told (or after 120 s, a bound, not a measurement), 200 ms
/// more for duplicates to show. kEventsLoaded events in all.
void run_two_loaders_four_consumers(const TestDatabase& db, const ConsumerLoop& loop, ConcurrentTally& tally);

inline constexpr int kEventsLoaded = 2 * 150 * 20;

}  // namespace tributary::testing
