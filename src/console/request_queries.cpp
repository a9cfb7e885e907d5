#include "request_queries.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

namespace tributary::console {

namespace {

/// A request's query, read parameter by parameter; whatever is left unread
/// is refused, so that a misspelt parameter is an error, not a default.
/// Each parameter at most once; an empty value is the default.
class QueryReader {
public:
    explicit QueryReader(const std::multimap<std::string, std::string>& query) : query_(query) {}

    std::optional<std::string> text(const std::string& name) {
        read_.insert(name);
        if (query_.count(name) > 1) throw std::invalid_argument("'" + name + "' is given more than once");
        const auto it = query_.find(name);
        if (it == query_.end() || it->second.empty()) return std::nullopt;
        return it->second;
    }

    int integer(const std::string& name, int fallback, int min, int max) {
        const auto value = text(name);
        if (!value) return fallback;
        const auto range =
            "'" + name + "' must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
        if (value->size() > 10 ||
            !std::all_of(value->begin(), value->end(), [](unsigned char c) { return std::isdigit(c); }))
            throw std::invalid_argument(range);
        const long long number = std::stoll(*value);
        if (number < min || number > max) throw std::invalid_argument(range);
        return static_cast<int>(number);
    }

    std::string one_of(const std::string& name, const std::string& fallback, const std::set<std::string>& allowed) {
        const auto value = text(name);
        if (!value) return fallback;
        if (!allowed.count(*value)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            throw std::invalid_argument("'" + name + "' must be one of " + list);
        }
        return *value;
    }

    /// Refuses any parameter not read.
    void done() const {
        for (const auto& [name, value] : query_)
            if (!read_.count(name)) throw std::invalid_argument("unknown query parameter '" + name + "'");
    }

private:
    const std::multimap<std::string, std::string>& query_;
    std::set<std::string> read_;
};

constexpr int kMaxOffset = std::numeric_limits<int>::max();

}  // namespace

SourceQuery source_query(const std::multimap<std::string, std::string>& query) {
    QueryReader q(query);
    SourceQuery out;
    out.pattern = q.text("pattern").value_or(">");
    out.state = q.one_of("state", "", {"ok", "transient", "throttled", "failing", "paused", "pushed", "published"});
    out.sort = q.one_of("sort", "name", {"name", "lag", "errors", "last_success"});
    out.descending = q.one_of("order", "asc", {"asc", "desc"}) == "desc";
    out.limit = q.integer("limit", 100, 1, 500);
    out.offset = q.integer("offset", 0, 0, kMaxOffset);
    q.done();
    return out;
}

DeadLetterQuery dead_letter_query(const std::multimap<std::string, std::string>& query) {
    QueryReader q(query);
    DeadLetterQuery out;
    out.limit = q.integer("limit", 50, 1, 500);
    out.offset = q.integer("offset", 0, 0, kMaxOffset);
    q.done();
    return out;
}

TailQuery tail_query(const std::multimap<std::string, std::string>& query) {
    QueryReader q(query);
    TailQuery out{q.text("pattern").value_or(">"), q.text("from").value_or("end")};
    q.done();
    return out;
}

void no_query(const std::multimap<std::string, std::string>& query) { QueryReader(query).done(); }

}  // namespace tributary::console
