// tributary-bench-measure: run a command and report what it cost, exactly.
//
//   tributary-bench-measure OUT_FILE -- COMMAND [ARG]...
//
// Writes one line to OUT_FILE when COMMAND ends:
//   wall_s=<seconds> user_s=<seconds> sys_s=<seconds> maxrss_kb=<KiB> exit=<code or 128+signal>
// and exits with the same code. SIGINT/SIGTERM/SIGHUP are passed on to COMMAND.
//
// Why a program and not bash: wait4() is the only way to get a child's peak RSS and CPU time
// after it has exited (polling /proc misses the end, GNU time is not on every Debian), and the
// benchmark wants both for every loader process it starts.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <initializer_list>

namespace {

volatile sig_atomic_t child_pid = 0;

void forward(int sig) {
    if (child_pid > 0) kill(child_pid, sig);
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

double monotonic_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
        std::fprintf(stderr, "usage: %s OUT_FILE -- COMMAND [ARG]...\n", argv[0]);
        return 2;
    }
    const char* out_path = argv[1];
    const double start = monotonic_now();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[3], argv + 3);
        std::fprintf(stderr, "%s: cannot run %s: %s\n", argv[0], argv[3], std::strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    struct sigaction sa {};
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

    int status = 0;
    rusage usage{};
    while (wait4(pid, &status, 0, &usage) < 0) {
        if (errno != EINTR) {
            std::perror("wait4");
            return 1;
        }
    }
    const double wall = monotonic_now() - start;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (FILE* out = std::fopen(out_path, "w")) {
        std::fprintf(out, "wall_s=%.3f user_s=%.3f sys_s=%.3f maxrss_kb=%ld exit=%d\n", wall, seconds(usage.ru_utime),
                     seconds(usage.ru_stime), usage.ru_maxrss, code);
        std::fclose(out);
    } else {
        std::perror(out_path);
    }
    return code;
}
