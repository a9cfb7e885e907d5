#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "leased_batch.h"

namespace tributary {

/// The consumer group named in a read does not exist (deleted meanwhile, or
/// never created). Reading again will not help.
class GroupNotFound : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What `next` did: settled the batch it was given (or not) and leased the
/// next one (or found nothing to do).
struct NextBatch {
    /// Whether the batch given to `next` was acked: false when its lease was
    /// lost, as `ack`'s false; nothing when no batch was given.
    std::optional<bool> previous_acked;
    /// The batch leased, as `read` returns it.
    std::optional<LeasedBatch> batch;
};

/// One consumer group's view of the log: batches leased to a consumer, then
/// acked, failed or extended with the lease token. Each call is atomic on
/// its own. Not thread-safe: one instance per thread (each has its own
/// database session). Throws DatabaseUnavailable (errors.h) when the
/// database is away, GroupNotFound from `read` and `next`, and other exceptions for
/// unexpected errors.
class GroupLog {
public:
    virtual ~GroupLog() = default;

    /// Leases the next batch of at most `max_events` events to `consumer`:
    /// an expired batch taken over, a due retry, or fresh events. Nothing
    /// when there is nothing to do now.
    virtual std::optional<LeasedBatch> read(const std::string& consumer, int max_events) = 0;

    /// Acks `previous` when given, then leases the next batch as `read`
    /// would, in one atomic step (one round trip per batch in the steady
    /// state). When it throws, nothing happened, or everything did and the
    /// reply was lost: retrying may then find `previous` acked already
    /// (previous_acked false) and the batch leased by the lost try left to
    /// its lease.
    virtual NextBatch next(const std::string& consumer, int max_events, const LeasedBatch* previous) = 0;

    /// Acks the whole batch. False: the lease was lost (another consumer
    /// holds the batch now, or it is settled already); nothing changed.
    virtual bool ack(const LeasedBatch& batch) = 0;

    /// Fails the whole batch: its events come back later, singly, with
    /// backoff, or go to the dead letters. False as for `ack`.
    virtual bool fail(const LeasedBatch& batch, const std::string& error) = 0;

    /// Extends the lease by the group's lease duration from now. False as for
    /// `ack`.
    virtual bool extend(std::int64_t batch_id, const std::string& token) = 0;
    /// `consumer` stops: in a group of lanes the lanes it holds go to the
    /// other consumers at once, not one lease after its last read. Its batches
    /// in flight stay leased to it. Returns how many lanes it gave back (0 in
    /// a group of one lane).
    virtual int leave(const std::string& consumer) = 0;
    /// Whether `consumer`, whose read has just found nothing, has lanes
    /// coming: it holds less than its share of a group of lanes while a lane
    /// it does not hold has work, which its holder gives back at its next
    /// read. False in a group of one lane. `--until-idle` reads again rather
    /// than stopping while it is true.
    virtual bool awaits_lanes(const std::string& consumer) = 0;
};

/// Opens a GroupLog of its own for each thread that needs one.
using GroupLogOpener = std::function<std::unique_ptr<GroupLog>()>;

}  // namespace tributary
