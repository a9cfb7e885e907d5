#include "session_settings.h"

#include <utility>
#include <vector>

#include "postgres/statements.h"

namespace tributary::postgres {

namespace {

const std::vector<std::pair<const char*, const char*>> kDefaults = {
    {"connect_timeout", "10"},
    {"keepalives", "1"},
    {"keepalives_idle", "30"},
    {"keepalives_interval", "10"},
    {"keepalives_count", "3"},
    // Unacknowledged data (a COPY into a vanished host) fails after 30 s
    // instead of the kernel's ~15 minutes of retransmissions.
    {"tcp_user_timeout", "30000"},
    {"application_name", "tributary"},
    // Payloads are UTF-8 JSON whatever the database's encoding; PostgreSQL
    // converts, or refuses a character the database cannot hold.
    {"client_encoding", "UTF8"},
};

bool is_uri(const std::string& conninfo) {
    return conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0;
}

}  // namespace

std::string with_connection_defaults(const std::string& conninfo) {
    std::string result = conninfo;
    const bool uri = is_uri(conninfo);
    char separator = uri ? (conninfo.find('?') == std::string::npos ? '?' : '&') : ' ';
    for (const auto& [key, value] : kDefaults) {
        if (conninfo.find(std::string(key) + "=") != std::string::npos) continue;
        if (!result.empty() || uri) result += separator;
        result += std::string(key) + "=" + value;
        if (uri) separator = '&';
    }
    return result;
}

const char* session_setup_sql() { return statements::session::setup; }

}  // namespace tributary::postgres
