#pragma once

#include <chrono>

namespace tributary {

/// What an ack or fail that the database refused (false) means to the
/// consumer that sent it.
enum class Refusal {
    lost,           ///< the lease went elsewhere (taken over, or the group reset)
    settled_by_us,  ///< an earlier try of ours settled it; its reply was lost
};

/// Judges a refusal. An ack or fail is idempotent by lease token: a try whose
/// reply was lost (the call threw) may have committed, and then the next try
/// is refused. A takeover needs the lease to have run out in the database;
/// the heartbeat's `lease_ends` is the earliest it can (measured before the
/// database started or extended it). So when an earlier try failed and the
/// refusing reply came back before `lease_ends`, no other consumer can have
/// taken the batch: the earlier try settled it. Otherwise the refusal is a
/// lost lease, as without retries. The one case judged wrong: a `group reset`
/// within the lease, after a failed try, counts as settled.
inline Refusal judge_refusal(bool earlier_try_failed, std::chrono::steady_clock::time_point reply_at,
                             std::chrono::steady_clock::time_point lease_ends) {
    return earlier_try_failed && reply_at < lease_ends ? Refusal::settled_by_us : Refusal::lost;
}

}  // namespace tributary
