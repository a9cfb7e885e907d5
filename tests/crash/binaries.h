#pragma once

// Private copies of the programs a run starts again and again (loaders are
// restarted dozens of times): a rebuild of build/ during a long run must not
// change them under the run, or make them briefly unavailable.

#include <string>

namespace tributary::crash {

class Binaries {
public:
    /// Copies tributary, tributary-crashable and, when built, the fault proxy.
    Binaries();
    ~Binaries();
    Binaries(const Binaries&) = delete;
    Binaries& operator=(const Binaries&) = delete;

    std::string tributary, crashable;
    std::string proxy;  ///< empty when tools/fault-proxy is not built

private:
    std::string copy(const std::string& from);
    std::string dir_;
};

}  // namespace tributary::crash
