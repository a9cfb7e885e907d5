#pragma once

#include <string>

#include <pqxx/pqxx>

namespace tributary::postgres {

/// Logs what the server says to a connection besides results (RAISE
/// WARNING, NOTICE) through spdlog: a warning, with `context` (the
/// session's owner, e.g. "group=orders") first, as every log line has its
/// source. libpqxx drops them when no handler is registered. The handler
/// belongs to one connection and must not outlive it.
class ServerWarnings : public pqxx::errorhandler {
public:
    ServerWarnings(pqxx::connection_base& connection, std::string context);
    bool operator()(const char message[]) noexcept override;

private:
    std::string context_;
};

}  // namespace tributary::postgres
