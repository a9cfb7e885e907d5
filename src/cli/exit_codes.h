#pragma once

namespace tributary::cli {

/// Exit codes a supervisor can act on (documented in docs/operations.md, "Exit codes").
enum ExitCode : int {
    exit_ok = 0,           ///< done, or stopped gracefully (signal, --max-runtime, --until-idle)
    exit_failure = 1,      ///< an error; the message says what to fix
    exit_usage = 2,        ///< bad command line
    exit_memory_limit = 3  ///< stopped gracefully at --max-rss: start it again
};

}  // namespace tributary::cli
