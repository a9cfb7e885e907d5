#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace tributary::testing {

/// A program the test starts, with its stdout and stderr in files; killed
/// (SIGKILL) on destruction if still running.
class ChildProcess {
public:
    ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    void signal(int sig) const;
    /// Exit code (128+signal when killed by one); nothing on timeout.
    std::optional<int> wait_for(std::chrono::milliseconds timeout);
    /// Waits until stdout holds a full first line, and returns it.
    std::string first_line(std::chrono::milliseconds timeout) const;
    std::string out() const;
    std::string err() const;

private:
    pid_t pid_ = -1;
    std::optional<int> exit_code_;
    std::string out_path_, err_path_;
};

/// Runs a program to completion (with a generous timeout) and returns exit
/// code, stdout and stderr.
struct Completed {
    int code;
    std::string out, err;
};
Completed run_program(const std::vector<std::string>& argv,
                      std::chrono::milliseconds timeout = std::chrono::minutes(2));

}  // namespace tributary::testing
