#include "postgres_console_store.h"

#include <stdexcept>

#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

namespace sql = statements::console;

// The statements by the names each session prepares them under.
struct Statement {
    const char* name;
    const char* text;
};
const Statement kOverview{"console_overview", sql::overview};
const Statement kSources{"console_sources", sql::sources};
const Statement kSource{"console_source", sql::source};
const Statement kGroups{"console_groups", sql::groups};
const Statement kGroup{"console_group", sql::group};
const Statement kKeepGroupMatches{"console_keep_group_matches", sql::keep_group_matches};
const Statement kPause{"console_pause", sql::pause};
const Statement kResume{"console_resume", sql::resume};
const Statement kNudge{"console_nudge", sql::nudge};
const Statement kReplay{"console_replay", sql::replay};
const Statement kReset{"console_reset", sql::reset};

std::unique_ptr<PostgresSession> new_session(const std::string& url) {
    auto session = std::make_unique<PostgresSession>(url);
    for (const auto& s :
         {kOverview, kSources, kSource, kGroups, kGroup, kKeepGroupMatches, kPause, kResume, kNudge, kReplay, kReset})
        session->prepare(s.name, s.text);
    return session;
}

/// What the console's functions raise, as the port's errors: a bad argument (22023), a name that
/// does not exist (P0002), anything else a refusal the operator reads as it is.
[[noreturn]] void throw_console_error(const pqxx::sql_error& e) {
    const auto message = server_message(e);
    if (e.sqlstate() == "22023") throw std::invalid_argument(message);
    if (e.sqlstate() == "P0002") throw console::NotFound(message);
    throw console::ActionRefused(message);
}

}  // namespace

/// A session borrowed from the pool for one call, given back (idle) at the end of it.
class PostgresConsoleStore::Borrowed {
public:
    explicit Borrowed(PostgresConsoleStore& store) : store_(store) {
        std::unique_lock<std::mutex> lock(store_.mutex_);
        store_.returned_.wait(lock, [&] { return !store_.idle_.empty() || store_.open_ < store_.max_sessions_; });
        if (!store_.idle_.empty()) {
            session_ = std::move(store_.idle_.back());
            store_.idle_.pop_back();
            return;
        }
        ++store_.open_;
        lock.unlock();
        try {
            session_ = new_session(store_.database_url_);
        } catch (...) {
            std::lock_guard<std::mutex> relock(store_.mutex_);
            --store_.open_;
            store_.returned_.notify_one();
            throw;
        }
    }
    ~Borrowed() {
        std::lock_guard<std::mutex> lock(store_.mutex_);
        store_.idle_.push_back(std::move(session_));
        store_.returned_.notify_one();
    }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;

    PostgresSession& session() { return *session_; }

private:
    PostgresConsoleStore& store_;
    std::unique_ptr<PostgresSession> session_;
};

PostgresConsoleStore::PostgresConsoleStore(std::string database_url, int max_sessions)
    : database_url_(std::move(database_url)), max_sessions_(max_sessions < 1 ? 1 : max_sessions) {}

PostgresConsoleStore::~PostgresConsoleStore() = default;

template <typename... Args>
std::string PostgresConsoleStore::document(const GroupMatches& matches, const char* statement, Args&&... args) {
    Borrowed borrowed(*this);
    try {
        // PostgresSession::run turns a lost connection into DatabaseUnavailable (and reconnects
        // on the next call); what the function raised comes out as a pqxx::sql_error.
        return borrowed.session().run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            // In a statement of its own, before the page's: the page reads one snapshot, which
            // must see the matches kept.
            if (matches.keep)  // a null const char* is SQL's NULL: every group
                tx.exec_prepared(kKeepGroupMatches.name, matches.group ? matches.group->c_str() : nullptr);
            const pqxx::row row = tx.exec_prepared1(statement, std::forward<Args>(args)...);
            return row[0].as<std::string>();
        });
    } catch (const pqxx::sql_error& e) {
        throw_console_error(e);
    }
}

std::string PostgresConsoleStore::overview() { return document({true, std::nullopt}, kOverview.name); }

std::string PostgresConsoleStore::sources(const console::SourceQuery& query) {
    return document({}, kSources.name, query.pattern, query.state, query.sort, query.descending, query.limit,
                    query.offset);
}

std::string PostgresConsoleStore::source(const std::string& name) { return document({}, kSource.name, name); }

std::string PostgresConsoleStore::groups() { return document({true, std::nullopt}, kGroups.name); }

std::string PostgresConsoleStore::group(const std::string& name, const console::DeadLetterQuery& query) {
    return document({true, name}, kGroup.name, name, query.limit, query.offset);
}

std::string PostgresConsoleStore::pause(const std::string& source) { return document({}, kPause.name, source); }

std::string PostgresConsoleStore::resume(const std::string& source) { return document({}, kResume.name, source); }

std::string PostgresConsoleStore::nudge(const std::string& source) { return document({}, kNudge.name, source); }

std::string PostgresConsoleStore::replay(const std::string& group, std::optional<std::int64_t> seq) {
    if (seq) return document({}, kReplay.name, group, *seq);
    return document({}, kReplay.name, group, static_cast<const char*>(nullptr));  // every dead letter
}

std::string PostgresConsoleStore::reset(const std::string& group, const std::string& to) {
    return document({}, kReset.name, group, to);
}

}  // namespace tributary::postgres
