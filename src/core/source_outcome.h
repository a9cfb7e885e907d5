#pragma once

namespace tributary {

/// What one source's turn in a pass came to.
enum class SourceOutcome {
    stored,       ///< a batch was committed
    empty,        ///< the source had nothing new (now, or when last asked by anyone)
    failed,       ///< the fetch or the store failed; the source backs off
    conflict,     ///< another writer moved the cursor first; nothing stored
    locked,       ///< another worker holds the source
    not_due,      ///< the gate said "not yet" (interval)
    backing_off,  ///< the gate said "not yet" (the source failed lately)
    stopped,      ///< the process is stopping; the batch was abandoned
};

const char* to_string(SourceOutcome outcome);

}  // namespace tributary
