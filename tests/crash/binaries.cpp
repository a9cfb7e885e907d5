#include "binaries.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace tributary::crash {

Binaries::Binaries() {
    char dir[] = "/tmp/tributary-crash-bin.XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("cannot create a directory under /tmp");
    dir_ = dir;
    tributary = copy(TRIBUTARY_BIN);
    crashable = copy(TRIBUTARY_CRASHABLE_BIN);
    const std::string proxy_bin = TRIBUTARY_FAULT_PROXY_BIN;
    if (!proxy_bin.empty() && std::filesystem::exists(proxy_bin)) proxy = copy(proxy_bin);
}

Binaries::~Binaries() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

std::string Binaries::copy(const std::string& from) {
    const std::string to = dir_ + "/" + std::filesystem::path(from).filename().string();
    std::filesystem::copy_file(from, to);
    return to;
}

}  // namespace tributary::crash
