#include "mailbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <stdexcept>

namespace tributary::fault_proxy {

Mailbox::Mailbox() : event_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (event_fd_ < 0) throw std::runtime_error("eventfd failed");
}

Mailbox::~Mailbox() { ::close(event_fd_); }

bool Mailbox::call(std::function<void()> task) {
    std::future<void> done;
    {
        std::lock_guard lock(mutex_);
        if (closed_) return false;
        tasks_.push_back(Task{std::move(task), {}});
        done = tasks_.back().done.get_future();
    }
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t ignored = write(event_fd_, &one, sizeof one);
    done.get();  // rethrows what the task threw
    return true;
}

std::vector<Mailbox::Task> Mailbox::take() {
    std::uint64_t count = 0;
    [[maybe_unused]] ssize_t ignored = read(event_fd_, &count, sizeof count);
    std::lock_guard lock(mutex_);
    std::vector<Task> tasks;
    tasks.swap(tasks_);
    return tasks;
}

void Mailbox::run_pending() {
    for (Task& task : take()) {
        try {
            task.run();
            task.done.set_value();
        } catch (...) {
            task.done.set_exception(std::current_exception());
        }
    }
}

void Mailbox::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    run_pending();
}

}  // namespace tributary::fault_proxy
