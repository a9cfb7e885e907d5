#include "support/tributary_cli.h"

#include <regex>
#include <stdexcept>
#include <thread>

namespace tributary::testing {

std::vector<std::string> tributary_args(const std::string& db, std::vector<std::string> args) {
    args.insert(args.begin(), {TRIBUTARY_BIN, "--db", db});
    return args;
}

Completed run_tributary(const std::string& db, std::vector<std::string> args, int expected_code) {
    auto argv = tributary_args(db, std::move(args));
    auto done = run_program(argv);
    if (done.code != expected_code) {
        std::string command;
        for (const auto& a : argv) command += a + " ";
        throw std::runtime_error(command + "exited " + std::to_string(done.code) + ", expected " +
                                 std::to_string(expected_code) + "; stderr: " + done.err);
    }
    return done;
}

std::string wait_for_log(const ChildProcess& child, const std::string& pattern, std::chrono::milliseconds timeout) {
    const std::regex re(pattern);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        std::smatch match;
        const auto err = child.err();
        if (std::regex_search(err, match, re)) return match.size() > 1 ? match[1].str() : match[0].str();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("no log line matching " + pattern + " in:\n" + child.err());
}

nlohmann::json status_by_name(const std::string& db) {
    nlohmann::json by_name = nlohmann::json::object();
    for (auto& row : nlohmann::json::parse(run_tributary(db, {"status", "--json"}).out))
        by_name[row["name"].get<std::string>()] = row;
    return by_name;
}

}  // namespace tributary::testing
