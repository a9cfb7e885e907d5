#pragma once

#include <string>

namespace tributary::metrics {

/// A listening TCP socket (non-blocking, close-on-exec, SO_REUSEADDR) on
/// HOST:PORT, ours rather than libmicrohttpd's: HOST may be a name or IPv6,
/// and a failure can say which address could not be had. `what` names the
/// purpose in the error ("for metrics", "for webhooks"). Throws
/// std::runtime_error, or std::invalid_argument for an address that is not
/// HOST:PORT.
int open_listener(const std::string& address, const std::string& what);

/// The port a listening socket is bound to (the one picked for port 0).
int bound_port(int fd);

}  // namespace tributary::metrics
