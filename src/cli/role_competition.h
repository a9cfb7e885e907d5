#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <string>

#include "core/stop_signal.h"

namespace tributary::cli {

/// A process's part in one elected role's election (the maintainer's in `run`, the herald's in
/// every command that hosts one), on the calling thread until `stop`. `take_part` builds the
/// role's session and competes until the stop (it releases the lease then). Never fails the
/// process: a role that may not fill it (MaintainerForbidden) is handed to `forbidden`, which
/// says so once, and the part ends; any other failure is logged as `role: ...` and tried again
/// after `retry`.
void compete_until_stopped(const std::string& role, std::chrono::milliseconds retry, const StopSignal& stop,
                           const std::function<void()>& take_part,
                           const std::function<void(const std::exception&)>& forbidden);

}  // namespace tributary::cli
