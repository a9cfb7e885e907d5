#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tributary::console {

/// What the sources table asks for (GET /api/sources). `state` is empty for
/// every state, else one of ok, transient, throttled, failing, paused,
/// pushed, published. `sort` is one of name, lag, errors, last_success.
struct SourceQuery {
    std::string pattern = ">";
    std::string state;
    std::string sort = "name";
    bool descending = false;
    int limit = 100;
    int offset = 0;
};

/// A page of a group's dead letters (GET /api/groups/NAME).
struct DeadLetterQuery {
    int limit = 50;
    int offset = 0;
};

/// An action refused for a reason the operator can fix (a bad time, a group
/// that changed under them): the message is shown as it is.
class ActionRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A read or an action named something that does not exist.
class NotFound : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The console's port to the database: every read returns the JSON document
/// the API serves (docs/console.md), built by the database in one statement,
/// so a page costs one round trip. Actions return a small JSON document too.
/// Throws DatabaseUnavailable (core/errors.h) when the database is gone,
/// NotFound and ActionRefused as above, std::invalid_argument for a bad query
/// (a pattern or sort the database refuses).
class ConsoleStore {
public:
    virtual ~ConsoleStore() = default;

    virtual std::string overview() = 0;
    virtual std::string sources(const SourceQuery& query) = 0;
    virtual std::string source(const std::string& name) = 0;
    virtual std::string groups() = 0;
    virtual std::string group(const std::string& name, const DeadLetterQuery& query) = 0;

    virtual std::string pause(const std::string& source) = 0;
    virtual std::string resume(const std::string& source) = 0;
    virtual std::string nudge(const std::string& source) = 0;
    /// One dead letter (its seq) or, without one, all of the group's.
    virtual std::string replay(const std::string& group, std::optional<std::int64_t> seq) = 0;
    /// `to`: an ISO-8601 time, "beginning" or "end" (as `group reset --to`).
    virtual std::string reset(const std::string& group, const std::string& to) = 0;
};

}  // namespace tributary::console
