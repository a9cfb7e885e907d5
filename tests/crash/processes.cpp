#include "processes.h"

#include <mutex>
#include <stdexcept>

namespace tributary::crash {

namespace {
std::mutex spawn_mutex;
}

std::unique_ptr<ChildProcess> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    std::lock_guard<std::mutex> guard(spawn_mutex);
    return std::make_unique<ChildProcess>(argv, env);
}

Completed run_to_end(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    auto child = spawn(argv);
    const auto code = child->wait_for(timeout);
    if (!code) throw std::runtime_error(argv[0] + " did not finish in time; stderr: " + tail_lines(child->err(), 10));
    return {*code, child->out(), child->err()};
}

std::string tail_lines(const std::string& text, int lines) {
    std::size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    while (pos > 0 && lines > 0) {
        pos = text.rfind('\n', pos - 1);
        if (pos == std::string::npos) return text;
        --lines;
    }
    return lines > 0 ? text : text.substr(pos + 1);
}

}  // namespace tributary::crash
