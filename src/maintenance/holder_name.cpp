#include "maintenance/holder_name.h"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <random>

namespace tributary::maintenance {

std::string unique_holder_name() {
    char host[HOST_NAME_MAX + 1] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    std::random_device random;
    char suffix[9];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(random()));
    return std::string(host[0] ? host : "unknown") + ":" + std::to_string(getpid()) + ":" + suffix;
}

}  // namespace tributary::maintenance
