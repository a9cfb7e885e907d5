#include "sql_errors.h"

#include "core/group_log.h"

namespace tributary::postgres {

std::string server_message(const pqxx::sql_error& e) {
    std::string text = e.what();
    // Where in PL/pgSQL it was raised is for us, not for the user.
    if (const auto context = text.find("\nCONTEXT:"); context != std::string::npos) text.erase(context);
    for (const char* prefix : {"ERROR:  ", "FATAL:  "})
        if (text.rfind(prefix, 0) == 0) text.erase(0, std::char_traits<char>::length(prefix));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    for (const char* label : {"\nHINT:  ", "\nDETAIL:  "})
        if (const auto at = text.find(label); at != std::string::npos)
            text.replace(at, std::char_traits<char>::length(label), "\n  ");
    return text;
}

void throw_api_error(const pqxx::sql_error& e) {
    const auto message = server_message(e);
    if (e.sqlstate() == "22023") throw InvalidRequest(message);
    if (e.sqlstate() == "P0002") throw GroupNotFound(message);
    throw std::runtime_error(message);
}

}  // namespace tributary::postgres
