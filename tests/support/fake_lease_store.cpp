#include "support/fake_lease_store.h"

namespace tributary::fakes {

std::optional<std::int64_t> FakeLeaseStore::acquire(const std::string& who, std::chrono::milliseconds lease) {
    const auto now = clock_.now();
    const bool renewing = holder == who && expires_at > now;
    if (!renewing && expires_at > now) return std::nullopt;
    if (!renewing) ++token;
    holder = who;
    expires_at = now + lease;
    return token;
}

void FakeLeaseStore::release(const maintenance::MaintainerLease& lease) {
    if (holder == lease.holder && token == lease.token) expires_at = Clock::time_point::min();
}

void FakeLeaseStore::fence(const maintenance::MaintainerLease& lease) const {
    if (holder != lease.holder || token != lease.token || expires_at <= clock_.now())
        throw maintenance::LeaseLost("maintainer \"" + lease.holder + "\" no longer holds the lease");
}

}  // namespace tributary::fakes
