// The armed fault points of tributary-crashable (see src/core/fault_points.h).
//
// TRIBUTARY_FAULT_POINTS="after_fetch:0.02,mid_insert:0.02,during_commit:0.02,after_commit:0.02"
// gives each point a probability; TRIBUTARY_FAULT_SEED seeds the draw. A point
// that fires says so on stderr ("fault point NAME: SIGKILL") and kills the
// process. during_commit fires from a timer a few hundred microseconds later,
// so that the kill lands while COMMIT is on the wire or being answered.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "core/fault_points.h"

namespace tributary {

namespace {

struct Armed {
    std::map<std::string, double> probability;
    std::mt19937_64 random;
    std::mutex mutex;

    Armed() {
        const char* seed = std::getenv("TRIBUTARY_FAULT_SEED");
        random.seed(seed ? std::strtoull(seed, nullptr, 10) ^ static_cast<unsigned long long>(getpid())
                         : std::random_device{}());
        const char* spec = std::getenv("TRIBUTARY_FAULT_POINTS");
        std::stringstream in(spec ? spec : "");
        for (std::string item; std::getline(in, item, ',');) {
            const auto colon = item.find(':');
            if (colon != std::string::npos) probability[item.substr(0, colon)] = std::atof(item.c_str() + colon + 1);
        }
    }

    bool fires(const char* name) {
        const auto it = probability.find(name);
        if (it == probability.end()) return false;
        std::lock_guard<std::mutex> guard(mutex);
        return std::uniform_real_distribution<double>(0, 1)(random) < it->second;
    }

    int delay_us() {
        std::lock_guard<std::mutex> guard(mutex);
        return std::uniform_int_distribution<int>(0, 2000)(random);
    }
};

Armed& armed() {
    static Armed instance;
    return instance;
}

[[noreturn]] void die(const char* name) {
    std::fprintf(stderr, "fault point %s: SIGKILL\n", name);
    std::fflush(stderr);
    std::raise(SIGKILL);
    std::abort();
}

}  // namespace

void fault_point(const char* name) {
    if (!armed().fires(name)) return;
    if (std::string(name) == "during_commit") {
        const int delay = armed().delay_us();
        std::thread([name, delay] {
            std::this_thread::sleep_for(std::chrono::microseconds(delay));
            die(name);
        }).detach();
        return;
    }
    die(name);
}

}  // namespace tributary
