#include "server_warnings.h"

#include <spdlog/spdlog.h>

namespace tributary::postgres {

ServerWarnings::ServerWarnings(pqxx::connection_base& connection, std::string context)
    : pqxx::errorhandler(connection), context_(std::move(context)) {}

bool ServerWarnings::operator()(const char message[]) noexcept {
    try {
        std::string text(message);
        // The log line has its level: the server's label goes.
        for (const char* label : {"WARNING:  ", "NOTICE:  "})
            if (text.rfind(label, 0) == 0) text.erase(0, std::char_traits<char>::length(label));
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
        // libpq's own line breaks inside a message ("\tIs the server running..."): one log line.
        for (auto& c : text)
            if (c == '\n' || c == '\t') c = ' ';
        spdlog::warn("{} PostgreSQL: {}", context_, text);
    } catch (...) {
        // A message that cannot be logged is dropped, as without a handler.
    }
    return true;
}

}  // namespace tributary::postgres
