#pragma once

#include <mutex>

#include "postgres_session.h"
#include "webhook/pushed_source_catalog.h"

namespace tributary::postgres {

/// PushedSourceCatalog over tributary.sources (kind 'push'): each row's
/// `receiving` read with read_receiving_json. A row that cannot be read (a
/// catalogue edited by hand) is still listed, with `misconfigured` saying
/// why, so that its requests are answered 503 rather than 404. A lost
/// session is StoreUnavailable; the next call opens a fresh one.
class PostgresPushedSources : public webhook::PushedSourceCatalog {
public:
    explicit PostgresPushedSources(PostgresSession& session);

    std::vector<webhook::PushedSource> pushed_sources() override;

private:
    PostgresSession& session_;
    std::mutex mutex_;  ///< one read at a time on the session
};

}  // namespace tributary::postgres
