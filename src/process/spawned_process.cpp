#include "spawned_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tributary::process {

namespace {

[[noreturn]] void throw_errno(int error, const char* what) {
    throw std::system_error(error, std::generic_category(), what);
}

/// A pipe with close-on-exec on both ends: the child gets its end through
/// dup2 (which clears the flag on the copy only).
void make_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) throw_errno(errno, "pipe2");
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    const long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
        return static_cast<int>(fd);
    }
#else
    (void)pid;
#endif
    return -1;
}

/// Owns the posix_spawn attribute objects for the duration of one spawn.
struct SpawnSetup {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;

    SpawnSetup(int child_stdin, int child_stderr) {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attributes);
        posix_spawn_file_actions_adddup2(&actions, child_stdin, STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, child_stderr, STDERR_FILENO);
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&attributes, &none);
        posix_spawnattr_setsigdefault(&attributes, &all);
        posix_spawnattr_setpgroup(&attributes, 0);
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
    }
};

}  // namespace

SpawnedProcess::SpawnedProcess(const std::string& command) {
    int in[2], err[2];
    make_pipe(in);
    try {
        make_pipe(err);
    } catch (...) {
        ::close(in[0]);
        ::close(in[1]);
        throw;
    }
    int result;
    {
        SpawnSetup setup(in[0], err[1]);
        const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
        result = posix_spawn(&pid_, "/bin/sh", &setup.actions, &setup.attributes, const_cast<char**>(argv), environ);
    }
    ::close(in[0]);
    ::close(err[1]);
    stdin_fd_ = in[1];
    stderr_fd_ = err[0];
    if (result != 0) {
        close_fd(stdin_fd_);
        close_fd(stderr_fd_);
        throw_errno(result, "cannot start /bin/sh");
    }
    fcntl(stdin_fd_, F_SETFL, fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
    fcntl(stderr_fd_, F_SETFL, fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
    exit_fd_ = open_pidfd(pid_);
}

SpawnedProcess::~SpawnedProcess() {
    if (!status_) {
        kill_group(SIGKILL);
        wait();
    }
    close_fd(stdin_fd_);
    close_fd(stderr_fd_);
    close_fd(exit_fd_);
}

void SpawnedProcess::close_stdin() { close_fd(stdin_fd_); }

void SpawnedProcess::close_stderr() { close_fd(stderr_fd_); }

std::optional<int> SpawnedProcess::try_wait() {
    if (status_) return status_;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) status_ = status;
    return status_;
}

void SpawnedProcess::kill_group(int signal) {
    // The group outlives the shell when it has children of its own.
    ::kill(-pid_, signal);
}

int SpawnedProcess::wait() {
    while (!status_) {
        int status = 0;
        const pid_t r = waitpid(pid_, &status, 0);
        if (r == pid_) status_ = status;
        else if (r < 0 && errno != EINTR) status_ = 0;  // not our child any more: nothing to wait for
    }
    return *status_;
}

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    return "ended with wait status " + std::to_string(status);
}

}  // namespace tributary::process
