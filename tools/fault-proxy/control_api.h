#pragma once

namespace httplib {
class Server;
}

namespace tributary::fault_proxy {

class Proxy;

// The HTTP control API (README.md): every route asks the proxy's loop thread to act and answers
// 200 with JSON; a bad or missing parameter is 400 {"error": "..."}.
void install_control_routes(httplib::Server& server, Proxy& proxy);

}  // namespace tributary::fault_proxy
