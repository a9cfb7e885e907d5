#pragma once

#include <optional>
#include <string>

#include <sys/types.h>

namespace tributary::process {

/// `/bin/sh -c COMMAND` in a process group of its own (so a Ctrl-C meant
/// for us does not reach it, and a kill reaches its children too), with
/// pipes to its stdin and from its stderr (non-blocking, close-on-exec on
/// our side so other children never inherit them), our stdout, and default
/// signal dispositions and mask (we block or ignore some; it must not).
/// Started with posix_spawn: safe while other threads run. The destructor
/// kills the group and reaps the child if it is still running.
class SpawnedProcess {
public:
    /// Throws std::system_error when the process cannot be started.
    explicit SpawnedProcess(const std::string& command);
    ~SpawnedProcess();
    SpawnedProcess(const SpawnedProcess&) = delete;
    SpawnedProcess& operator=(const SpawnedProcess&) = delete;

    pid_t pid() const { return pid_; }
    int stdin_fd() const { return stdin_fd_; }
    int stderr_fd() const { return stderr_fd_; }
    /// A descriptor that becomes readable when the child exits; -1 if the
    /// kernel has no pidfd (then poll with a timeout).
    int exit_fd() const { return exit_fd_; }
    void close_stdin();
    void close_stderr();

    /// The wait status once the child has exited (reaped), else nothing.
    std::optional<int> try_wait();
    /// Sends `signal` to the child's whole process group.
    void kill_group(int signal);
    /// Blocks until the child has exited; its wait status.
    int wait();

private:
    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stderr_fd_ = -1;
    int exit_fd_ = -1;
    std::optional<int> status_;
};

/// "exited with status 3", "killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

}  // namespace tributary::process
