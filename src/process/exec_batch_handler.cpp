#include "exec_batch_handler.h"

#include <cerrno>
#include <csignal>
#include <system_error>
#include <vector>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ndjson.h"
#include "spawned_process.h"
#include "stderr_tail.h"

namespace tributary::process {

namespace {

/// How often an I/O wait looks at the abandon signal (and, without a pidfd,
/// at the child's exit).
constexpr int kPollMs = 50;
constexpr std::size_t kWriteChunk = 64 * 1024;

/// Feeds the input to the child's stdin, collects its stderr, until it exits.
class Conversation {
public:
    Conversation(SpawnedProcess& child, const std::string& input, StderrTail& tail)
        : child_(child), input_(input), tail_(tail) {
        if (input_.empty()) child_.close_stdin();
    }

    /// Returns the wait status, or nothing when abandoned first.
    std::optional<int> run(const StopSignal& abandon) {
        for (;;) {
            if (abandon.stop_requested()) return std::nullopt;
            if (const auto status = child_.try_wait()) {
                drain_stderr();  // what it wrote just before exiting
                return status;
            }
            wait_for_io();
        }
    }

private:
    void wait_for_io() {
        std::vector<pollfd> fds;
        if (child_.stdin_fd() >= 0) fds.push_back({child_.stdin_fd(), POLLOUT, 0});
        if (child_.stderr_fd() >= 0) fds.push_back({child_.stderr_fd(), POLLIN, 0});
        if (child_.exit_fd() >= 0) fds.push_back({child_.exit_fd(), POLLIN, 0});
        // Without a pidfd, and with both pipes closed, only the timeout tells
        // us of the exit: keep it short then.
        const bool blind = child_.exit_fd() < 0 && fds.empty();
        if (poll(fds.data(), fds.size(), blind ? 5 : kPollMs) <= 0) return;
        for (const auto& p : fds) {
            if (!p.revents) continue;
            if (p.fd == child_.stdin_fd()) write_some();
            else if (p.fd == child_.stderr_fd()) read_stderr();
        }
    }

    void write_some() {
        const std::size_t size = std::min(kWriteChunk, input_.size() - written_);
        const ssize_t n = ::write(child_.stdin_fd(), input_.data() + written_, size);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return;
            // EPIPE: it closed its stdin without reading everything. That is
            // its business; its exit status says whether it succeeded.
            child_.close_stdin();
            return;
        }
        written_ += static_cast<std::size_t>(n);
        if (written_ == input_.size()) child_.close_stdin();  // EOF: the batch is complete
    }

    void read_stderr() {
        char buffer[8192];
        const ssize_t n = ::read(child_.stderr_fd(), buffer, sizeof buffer);
        if (n > 0) tail_.append(buffer, static_cast<std::size_t>(n));
        else if (n == 0 || (errno != EAGAIN && errno != EINTR)) child_.close_stderr();
    }

    /// Reads what is buffered without waiting: a grandchild may hold the
    /// pipe open long after the command is gone.
    void drain_stderr() {
        char buffer[8192];
        while (child_.stderr_fd() >= 0) {
            const ssize_t n = ::read(child_.stderr_fd(), buffer, sizeof buffer);
            if (n <= 0) break;
            tail_.append(buffer, static_cast<std::size_t>(n));
        }
    }

    SpawnedProcess& child_;
    const std::string& input_;
    StderrTail& tail_;
    std::size_t written_ = 0;
};

HandlerResult result_of(int status, const StderrTail& tail) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return HandlerResult::success();
    std::string error = "command " + describe_wait_status(status);
    const auto said = tail.text();
    if (!said.empty()) error += "; stderr: " + said;
    return HandlerResult::failure(error);
}

}  // namespace

HandlerResult ExecBatchHandler::handle(const LeasedBatch& batch, const StopSignal& abandon) {
    const std::string input = batch_ndjson(batch);
    StderrTail tail(stderr_limit_);
    std::optional<SpawnedProcess> child;
    try {
        child.emplace(command_);
    } catch (const std::system_error& e) {
        return HandlerResult::failure(std::string("cannot run the command: ") + e.what());
    }
    Conversation conversation(*child, input, tail);
    const auto status = conversation.run(abandon);
    if (!status) {
        child->kill_group(SIGKILL);
        child->wait();
        return HandlerResult::abandoned();
    }
    return result_of(*status, tail);
}

}  // namespace tributary::process
