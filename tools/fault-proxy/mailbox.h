#pragma once

#include <functional>
#include <future>
#include <mutex>
#include <vector>

namespace tributary::fault_proxy {

// Runs functions on the event-loop thread on behalf of other threads (the control API's), so
// that all proxy state belongs to that one thread. The loop polls fd() for reading.
class Mailbox {
public:
    Mailbox();
    ~Mailbox();
    Mailbox(const Mailbox&) = delete;
    Mailbox& operator=(const Mailbox&) = delete;

    int fd() const { return event_fd_; }

    // Any thread but the loop's: runs `task` on the loop thread and waits for it. False (and
    // `task` not run) once the loop has closed the mailbox.
    bool call(std::function<void()> task);

    // Loop thread: runs every task posted so far.
    void run_pending();
    // Loop thread, when it stops: runs what is pending; later calls return false.
    void close();

private:
    struct Task {
        std::function<void()> run;
        std::promise<void> done;
    };
    std::vector<Task> take();

    int event_fd_ = -1;
    std::mutex mutex_;
    std::vector<Task> tasks_;
    bool closed_ = false;
};

}  // namespace tributary::fault_proxy
