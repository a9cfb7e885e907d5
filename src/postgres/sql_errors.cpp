#include "sql_errors.h"

#include "core/errors.h"
#include "core/group_log.h"

namespace tributary::postgres {

std::string server_message(const pqxx::sql_error& e) {
    std::string text = e.what();
    // Where in PL/pgSQL it was raised is for us, not for the user.
    if (const auto context = text.find("\nCONTEXT:"); context != std::string::npos) text.erase(context);
    // Nor where in our statement: "LINE 25: FROM tributary.sources s" and a caret under it.
    if (const auto line = text.find("\nLINE "); line != std::string::npos) {
        const auto caret = text.find('\n', line + 1);
        const auto end = caret == std::string::npos ? caret : text.find('\n', caret + 1);
        text.erase(line, end == std::string::npos ? end : end - line);
    }
    for (const char* prefix : {"ERROR:  ", "FATAL:  "})
        if (text.rfind(prefix, 0) == 0) text.erase(0, std::char_traits<char>::length(prefix));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    for (const char* label : {"\nHINT:  ", "\nDETAIL:  "})
        if (const auto at = text.find(label); at != std::string::npos)
            text.replace(at, std::char_traits<char>::length(label), "\n  ");
    return text;
}

bool is_permission_denied(const pqxx::sql_error& e) {
    if (e.sqlstate() == "42501") return true;
    return dynamic_cast<const pqxx::insufficient_privilege*>(&e) != nullptr ||
           (e.sqlstate().empty() && std::string(e.what()).find("permission denied") != std::string::npos);
}

void throw_api_error(const pqxx::sql_error& e) {
    const auto message = server_message(e);
    if (is_permission_denied(e)) throw PermissionDenied(message);
    if (e.sqlstate() == "22023") throw InvalidRequest(message);
    if (e.sqlstate() == "P0002") throw GroupNotFound(message);
    throw std::runtime_error(message);
}

}  // namespace tributary::postgres
