#pragma once

#include <string>

namespace tributary::cli {

/// Sets up the process's logger on stderr. `format` "text": one line per
/// record, `TIME LEVEL host=H pid=P key=value... message`; "json": one JSON
/// object per line with time, level, host, pid, the message's leading
/// key=value pairs (worker, source, ...) as fields, and "msg".
void set_up_logging(const std::string& level, const std::string& format);

}  // namespace tributary::cli
