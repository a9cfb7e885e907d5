#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "core/batch_handler.h"

namespace tributary::process {

/// Runs a shell command once per batch (`/bin/sh -c COMMAND`) with the
/// batch as NDJSON on its stdin (see ndjson.h) and our stdout as its
/// stdout. Exit status 0 is success; anything else is a failure whose error
/// is the status and the last `stderr_limit` bytes of its stderr. A command
/// that does not read its stdin never blocks us: writes wait in poll, next
/// to the child's exit and the abandon signal. On `abandon`, the command's
/// process group is killed (SIGKILL) and the batch is abandoned.
/// Thread-safe: each call has its own child. Expects SIGPIPE ignored (main
/// does), so that a command closing its stdin early costs an EPIPE only.
class ExecBatchHandler : public BatchHandler {
public:
    explicit ExecBatchHandler(std::string command, std::size_t stderr_limit = 4096)
        : command_(std::move(command)), stderr_limit_(stderr_limit) {}

    HandlerResult handle(const LeasedBatch& batch, const StopSignal& abandon) override;

private:
    std::string command_;
    std::size_t stderr_limit_;
};

}  // namespace tributary::process
