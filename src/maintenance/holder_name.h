#pragma once

#include <string>

namespace tributary::maintenance {

/// A name for this maintainer that no other process shares: "host:pid:xxxxxxxx" (the random suffix
/// tells apart two processes that reuse a pid, on hosts that share a name, as containers do).
std::string unique_holder_name();

}  // namespace tributary::maintenance
