#pragma once

namespace tributary {

/// "Who may fetch": a non-blocking, per-source mutual exclusion shared by all
/// loader processes. A lock may be lost silently (the session behind it
/// died); the store's compare-and-set keeps that harmless.
class SourceLock {
public:
    virtual ~SourceLock() = default;
    /// True when this worker now holds the source; false when another does.
    virtual bool try_acquire(int source_id) = 0;
    /// Releases a lock taken by try_acquire. Never throws: a lock whose
    /// session is gone is released already.
    virtual void release(int source_id) noexcept = 0;
};

}  // namespace tributary
