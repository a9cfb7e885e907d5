#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin_token.h"
#include "console_metrics.h"
#include "console_store.h"
#include "core/stop_signal.h"
#include "core/wakeup.h"
#include "tail_feed.h"
#include "tail_slots.h"
#include "tail_stream.h"

namespace tributary::console {

/// One HTTP request as the console sees it, whatever server carries it.
struct ConsoleRequest {
    std::string method;
    std::string path;                               ///< percent-decoded, without the query
    std::multimap<std::string, std::string> query;  ///< decoded
    std::map<std::string, std::string> headers;     ///< names in lower case
    std::string body;
    std::string peer;  ///< the client's address, for the log

    std::optional<std::string> header(const std::string& lower_case_name) const;
};

/// The answer; `stream`, when set, is a live tail the server runs after
/// sending the head (status, type, headers), until it ends.
struct ConsoleResponse {
    int status = 200;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::shared_ptr<TailStream> stream;
};

/// What the live tail needs; without it, /api/tail answers 503.
struct TailService {
    TailFeeds& feeds;
    TailSlots& slots;
    Wakeup& wakeup;  ///< the loaders' hints, shared by every stream
    const StopSignal& stop;
    TailStream::Timing timing;
};

/// The console's HTTP API and pages (docs/console.md) as a pure mapping from
/// request to response over a ConsoleStore: routing, query and body
/// validation, the safety rules (token, same origin, read-only), error
/// mapping and the security headers. Thread-safe if the store is.
///
/// Errors: std::invalid_argument 400, NotFound 404, ActionRefused 409 (the
/// store's message shown as it is), DatabaseUnavailable 503 (and a log
/// line), anything else 500 with a fixed text: an unexpected exception's
/// message may hold internals (SQL, addresses), so it goes to the log only.
class ConsoleApi {
public:
    struct Options {
        std::string version;   ///< "0.17.0 (abc1234)"
        std::string database;  ///< "host:port/db", no user or password
        /// Answer only requests whose Host is the loopback (403 otherwise):
        /// set when the console listens on the loopback (DNS rebinding).
        bool loopback_only = false;
    };

    /// Without `token` the console is read-only: every POST is refused 403.
    /// Without `metrics`, GET /metrics answers 503.
    ConsoleApi(ConsoleStore& store, std::optional<AdminToken> token, Options options, TailService* tail = nullptr,
               ConsoleMetrics* metrics = nullptr);

    ConsoleResponse handle(const ConsoleRequest& request) const;

    bool read_only() const { return !token_; }

private:
    ConsoleResponse route_get(const ConsoleRequest& request) const;
    ConsoleResponse route_post(const ConsoleRequest& request) const;
    ConsoleResponse session() const;
    ConsoleResponse tail(const ConsoleRequest& request) const;
    ConsoleResponse metrics(const ConsoleRequest& request) const;
    /// The safety checks of an action; a refusal, or nothing when it may go.
    std::optional<ConsoleResponse> refusal(const ConsoleRequest& request, const std::string& what) const;

    ConsoleStore& store_;
    std::optional<AdminToken> token_;
    Options options_;
    TailService* tail_;
    ConsoleMetrics* metrics_;
};

/// The headers every response carries (docs/console.md, Safety); /api/
/// paths also `Cache-Control: no-store`. For the server's own answers too.
std::vector<std::pair<std::string, std::string>> security_headers(const std::string& path);

}  // namespace tributary::console
