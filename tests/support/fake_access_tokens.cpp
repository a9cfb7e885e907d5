#include "fake_access_tokens.h"

namespace tributary::fakes {

std::optional<AccessToken> FakeAccessTokens::current(int source_id) {
    const auto it = rows_.find(source_id);
    if (it == rows_.end()) return std::nullopt;
    const Row& row = it->second;
    const auto now = clock_.now();
    if (!row.value || row.rejected || row.expires_at <= now) return std::nullopt;
    return AccessToken{*row.value, row.generation, now >= row.renew_at};
}

bool FakeAccessTokens::try_become_refresher(int source_id, std::int64_t seen, std::chrono::seconds lease) {
    const auto now = clock_.now();
    auto [it, inserted] = rows_.try_emplace(source_id);
    Row& row = it->second;
    const bool usable = row.value && !row.rejected && row.expires_at > now;
    const bool leased = row.refreshing_until && *row.refreshing_until > now;
    if (!inserted && (leased || (usable && row.generation != seen))) return false;
    row.refreshing_until = now + lease;
    return true;
}

void FakeAccessTokens::store(int source_id, const std::string& value, std::chrono::seconds lifetime,
                             std::chrono::seconds renew_after) {
    const auto it = rows_.find(source_id);
    if (it == rows_.end()) return;
    Row& row = it->second;
    const auto now = clock_.now();
    row.value = value;
    ++row.generation;
    row.expires_at = now + lifetime;
    row.renew_at = now + renew_after;
    row.rejected = false;
    row.refreshing_until.reset();
}

void FakeAccessTokens::reject(int source_id, std::int64_t generation) {
    const auto it = rows_.find(source_id);
    if (it != rows_.end() && it->second.generation == generation) it->second.rejected = true;
}

}  // namespace tributary::fakes
