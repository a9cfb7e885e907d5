#pragma once

#include <cstdint>
#include <string>

#include <pqxx/pqxx>

#include "core/source_gate.h"

namespace tributary::postgres {

/// A success close (SourceGate::SlotSuccess) as the arguments of migration
/// 0006's success functions, which PostgresSourceGate runs on its own
/// (loader_close_succeeded) and PostgresEventStore with a batch
/// (loader_gate_succeeded, or loader_append's last four).
class SuccessClose {
public:
    /// `lock`: lock_to_release(), the namespace or SQL NULL.
    SuccessClose(const SourceGate::SlotSuccess& slot, const char* lock);

    /// Runs `statement`, prepared as one of the success functions with the
    /// parameters (source, lock, lease, pause_ms, interval_ms, drained, backlog).
    void run(pqxx::transaction_base& tx, const char* statement) const;

    int source_id() const { return source_id_; }
    const char* lock() const { return lock_; }
    std::int64_t lease() const { return lease_; }
    std::int64_t interval_ms() const { return interval_ms_; }
    /// The backlog, or SQL NULL (libpqxx 6.4 passes a null pointer as NULL).
    const char* backlog() const { return backlog_.empty() ? nullptr : backlog_.c_str(); }

private:
    int source_id_;
    const char* lock_;
    std::int64_t lease_, pause_ms_, interval_ms_;
    bool drained_;
    std::string backlog_;  ///< empty: NULL
};

}  // namespace tributary::postgres
