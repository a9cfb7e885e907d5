#include "archive_command.h"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/spawned_process.h"
#include "process/stderr_tail.h"

namespace tributary::maintenance {

namespace {

constexpr std::size_t kErrorLimit = 300;

/// The command with the partition's variables set and our credentials'
/// variables unset. The values are safe to splice: a partition's name is
/// events_<digits>, the bounds are digits, the format csv or text.
std::string wrapped(const ArchiveSettings& settings, const ArchiveTarget& target) {
    return "unset TRIBUTARY_DATABASE_URL TRIBUTARY_TEST_DATABASE_URL PGPASSWORD PGPASSFILE; "
           "TRIBUTARY_PARTITION='" +
           target.partition + "' TRIBUTARY_FROM_TX='" + target.from_tx + "' TRIBUTARY_TO_TX='" + target.to_tx +
           "' TRIBUTARY_FORMAT='" + settings.format +
           "'; export TRIBUTARY_PARTITION TRIBUTARY_FROM_TX TRIBUTARY_TO_TX TRIBUTARY_FORMAT; " + settings.command;
}

/// Reads what the command wrote to stderr so far (never blocks).
void drain(process::SpawnedProcess& child, process::StderrTail& tail) {
    if (child.stderr_fd() < 0) return;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(child.stderr_fd(), buffer, sizeof buffer);
        if (n > 0) {
            tail.append(buffer, static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0) child.close_stderr();
        return;
    }
}

/// Writes all of `data` to the command's stdin, draining its stderr
/// meanwhile (a command that fills its stderr pipe must not stall us).
/// False when it stopped reading (EPIPE).
bool write_all(process::SpawnedProcess& child, process::StderrTail& tail, const char* data, std::size_t size) {
    while (size > 0) {
        pollfd fds[2] = {{child.stdin_fd(), POLLOUT, 0}, {child.stderr_fd(), POLLIN, 0}};
        if (::poll(fds, child.stderr_fd() < 0 ? 1 : 2, 1000) < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "poll on the archive command");
        if (fds[1].revents != 0) drain(child, tail);
        if ((fds[0].revents & (POLLERR | POLLHUP)) != 0 && (fds[0].revents & POLLOUT) == 0) return false;
        if ((fds[0].revents & POLLOUT) == 0) continue;
        const ssize_t n = ::write(child.stdin_fd(), data, size);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            if (errno == EPIPE) return false;
            throw std::system_error(errno, std::generic_category(), "writing to the archive command");
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

std::string first_line(const std::string& text) {
    const auto end = text.find('\n');
    return text.substr(0, end == std::string::npos ? text.size() : end);
}

}  // namespace

std::optional<std::string> run_archive_command(
    const ArchiveSettings& settings, const ArchiveTarget& target,
    const std::function<void(const std::function<bool(const char*, std::size_t)>&)>& produce) {
    process::SpawnedProcess child(wrapped(settings, target));
    process::StderrTail tail(kErrorLimit);
    bool reading = true;
    produce([&](const char* data, std::size_t size) {
        if (reading) reading = write_all(child, tail, data, size);
        return reading;
    });
    child.close_stdin();
    while (child.stderr_fd() >= 0) {
        pollfd fd{child.stderr_fd(), POLLIN, 0};
        ::poll(&fd, 1, 1000);
        drain(child, tail);
    }
    const int status = child.wait();
    if (reading && WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
    std::string why = process::describe_wait_status(status);
    if (!reading) why = "it stopped reading its input (" + why + ")";
    const std::string error = first_line(tail.text());
    return error.empty() ? why : why + ": " + error;
}

}  // namespace tributary::maintenance
