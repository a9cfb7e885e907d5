#pragma once

#include <string>

#include "leased_batch.h"
#include "stop_signal.h"

namespace tributary {

/// What became of one batch in a handler.
struct HandlerResult {
    enum class Outcome {
        success,   ///< every event processed: ack the batch
        failure,   ///< fail the batch with `error`: its events are retried
        abandoned  ///< given up on `abandon`: neither ack nor fail; the batch
                   ///< comes back after its lease
    };
    Outcome outcome = Outcome::success;
    std::string error;

    static HandlerResult success() { return {Outcome::success, {}}; }
    static HandlerResult failure(std::string why) { return {Outcome::failure, std::move(why)}; }
    static HandlerResult abandoned() { return {Outcome::abandoned, {}}; }
};

/// Does the user's work on a batch. Called from several threads at once,
/// one batch per call. A handler that runs long must watch `abandon` (set
/// when the shutdown timeout is over) and return `abandoned` promptly.
class BatchHandler {
public:
    virtual ~BatchHandler() = default;
    virtual HandlerResult handle(const LeasedBatch& batch, const StopSignal& abandon) = 0;
};

}  // namespace tributary
