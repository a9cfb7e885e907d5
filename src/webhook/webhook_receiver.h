#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::webhook {

/// A request as the HTTP adapter received it, whole: the receiver needs no
/// more of HTTP than this.
struct IncomingRequest {
    std::string method;        ///< "POST", ...
    std::string path;          ///< without the query, e.g. /sources/orders/events
    std::string_view body;     ///< raw bytes, as signed
    std::string content_type;  ///< "" when none
    /// A request header's value by name (case-insensitive), none when absent.
    std::function<std::optional<std::string>(std::string_view name)> header;
};

/// The answer: status, a short JSON body, and for 503 when to come back.
struct Reply {
    int status = 200;
    std::string body;  ///< JSON: {"stored": n, "duplicates": m} or {"error": "..."}
    std::optional<std::chrono::seconds> retry_after;
};

}  // namespace tributary::webhook

#include <cstddef>
#include <memory>

#include "pushed_events.h"
#include "pushed_source_catalog.h"

namespace tributary::webhook {

/// What a receiver tells its metrics and log (the HTTP adapter's observer).
class ReceiverObserver {
public:
    virtual ~ReceiverObserver() = default;
    /// One request answered: its source ("" when unknown), status, events stored.
    virtual void answered(const std::string& source, int status, std::size_t stored) = 0;
    /// One group commit: how many requests and events it carried.
    virtual void committed(std::size_t requests, std::size_t events) = 0;
};

/// `tributary receive`'s core (docs/sources.md "Pushed sources"): from a
/// whole request to its answer. POST /sources/NAME/events: the source looked
/// up (404), its body limit (413), its authentication (401, before anything of
/// the body is parsed), the body read into events with their keys (400, saying
/// why), then stored with every other request waiting at that moment in one
/// transaction (a group commit), answered only once committed: 201 with
/// something stored, 200 when every key was stored already. 503 with
/// Retry-After when the database cannot be reached, the source is paused or
/// its secret's variable is not set, or the queue of requests waiting to be
/// committed is full (memory stays bounded under a flood). 413 for a request
/// of more events than the queue may hold (max_queued_events): it would
/// never fit.
class WebhookReceiver {
public:
    struct Options {
        std::size_t max_queued_events = 20000;            ///< beyond: 503 (413 for one request beyond it alone)
        std::size_t max_queued_bytes = 64 * 1024 * 1024;  ///< of payloads; beyond: 503
        std::size_t max_commit_events = 5000;             ///< events of one group commit, at most
        std::chrono::milliseconds refresh_every{1000};    ///< the catalogue read again
        std::chrono::seconds retry_after{1};
    };
    /// Variables by name from the receiver's environment (std::getenv in the CLI).
    using Environment = std::function<std::optional<std::string>(const std::string& name)>;
    using Now = std::function<std::chrono::system_clock::time_point()>;

    WebhookReceiver(PushedSourceCatalog& catalog, PushedEventStore& store, Options options, Environment environment,
                    Now now, ReceiverObserver* observer = nullptr);
    ~WebhookReceiver();  ///< stops: waiting requests are answered 503
    WebhookReceiver(const WebhookReceiver&) = delete;
    WebhookReceiver& operator=(const WebhookReceiver&) = delete;

    /// Answers one request; thread-safe; blocks until its events are
    /// committed or refused. Never throws for anything a request holds.
    Reply handle(const IncomingRequest& request);

    /// The largest body any pushed source takes (for the HTTP adapter, which
    /// refuses longer ones with 413 before reading them).
    std::size_t largest_body_bytes();

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace tributary::webhook
