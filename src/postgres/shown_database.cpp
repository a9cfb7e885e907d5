#include "shown_database.h"

#include <libpq-fe.h>

#include <map>
#include <memory>

namespace tributary::postgres {

namespace {

using Options = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

std::map<std::string, std::string> values(PQconninfoOption* options) {
    std::map<std::string, std::string> out;
    for (auto* o = options; o && o->keyword; ++o)
        if (o->val && *o->val) out[o->keyword] = o->val;
    return out;
}

}  // namespace

std::string shown_database(const std::string& conninfo) {
    Options parsed(PQconninfoParse(conninfo.c_str(), nullptr), &PQconninfoFree);
    if (!parsed) return "(unknown)";
    // What the string leaves out, libpq takes from PG* variables or defaults.
    Options defaults(PQconndefaults(), &PQconninfoFree);
    auto shown = values(defaults.get());
    for (auto& [key, value] : values(parsed.get())) shown[key] = value;
    std::string out = shown.count("host") ? shown["host"] : shown.count("hostaddr") ? shown["hostaddr"] : "";
    if (shown.count("port")) out += ":" + shown["port"];
    if (shown.count("dbname")) out += "/" + shown["dbname"];
    return out.empty() ? "(unknown)" : out;
}

}  // namespace tributary::postgres
