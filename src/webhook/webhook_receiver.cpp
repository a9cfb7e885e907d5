#include "webhook_receiver.h"

#include <exception>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/names.h"
#include "group_committer.h"
#include "pushed_body.h"
#include "pushed_source_cache.h"
#include "refusal_log.h"
#include "request_authentication.h"

namespace tributary::webhook {
namespace {

constexpr std::string_view kPathPrefix = "/sources/";
constexpr std::string_view kPathSuffix = "/events";

/// The NAME of /sources/NAME/events, or nothing for any other path.
std::optional<std::string> source_in_path(const std::string& path) {
    if (path.size() <= kPathPrefix.size() + kPathSuffix.size()) return std::nullopt;
    if (path.compare(0, kPathPrefix.size(), kPathPrefix) != 0) return std::nullopt;
    if (path.compare(path.size() - kPathSuffix.size(), kPathSuffix.size(), kPathSuffix) != 0) return std::nullopt;
    std::string name = path.substr(kPathPrefix.size(), path.size() - kPathPrefix.size() - kPathSuffix.size());
    if (name.find('/') != std::string::npos) return std::nullopt;
    return name;
}

// Bodies are JSON; a message may quote a hostile body, so nothing in it may
// break the JSON (invalid UTF-8 is replaced).
std::string error_body(const std::string& message) {
    return nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

GroupCommitter::Options committer_options(const WebhookReceiver::Options& options) {
    GroupCommitter::Options out;
    out.max_queued_events = options.max_queued_events;
    out.max_queued_bytes = options.max_queued_bytes;
    out.max_commit_events = options.max_commit_events;
    return out;
}

/// A reply, and what the observer is told of it.
struct Answered {
    Answered(Reply reply_in) : reply(std::move(reply_in)) {}  // implicit: every refusal is a Reply
    Reply reply;
    std::string source;  ///< "" when no pushed source was found
    std::size_t stored = 0;
};

}  // namespace

struct WebhookReceiver::State {
    State(PushedSourceCatalog& catalog, PushedEventStore& store, Options options_in, Environment environment_in,
          Now now_in, ReceiverObserver* observer_in)
        : options(options_in),
          environment(std::move(environment_in)),
          now(std::move(now_in)),
          observer(observer_in),
          sources(catalog, options_in.refresh_every),
          committer(store, committer_options(options_in), [this](std::size_t requests, std::size_t events) {
              if (observer != nullptr) observer->committed(requests, events);
          }) {}

    Answered answer(const IncomingRequest& request);
    Reply answer_for(const PushedSource& source, const IncomingRequest& request, std::size_t& stored);
    Reply stored_reply(const PushedSource& source, std::size_t stored, std::size_t events);

    Reply refuse(const std::string& source, int status, const std::string& message, spdlog::level::level_enum level);
    Reply unavailable(const std::string& source, const std::string& message, spdlog::level::level_enum level);

    const Options options;
    const Environment environment;
    const Now now;
    ReceiverObserver* const observer;
    PushedSourceCache sources;
    RefusalLog refusals;
    GroupCommitter committer;  ///< last: stopped first, while all above still stands
};

Answered WebhookReceiver::State::answer(const IncomingRequest& request) {
    const auto name = source_in_path(request.path);
    if (!name) return Reply{404, error_body("not found: POST events to /sources/NAME/events"), std::nullopt};
    if (request.method != "POST")
        return Reply{405, error_body("method " + request.method.substr(0, 20) + " not allowed: POST events here"),
                     std::nullopt};
    if (!is_valid_name(*name)) return Reply{404, error_body("no pushed source of that name"), std::nullopt};

    const auto lookup = sources.find(*name, PushedSourceCache::Clock::now());
    if (lookup.kind == PushedSourceCache::Lookup::Kind::unavailable)
        return Reply{503, error_body("the receiver cannot read its sources now; retry later"), options.retry_after};
    if (lookup.kind == PushedSourceCache::Lookup::Kind::unknown) {
        spdlog::debug("receiver: no pushed source {}: 404", *name);
        return Reply{404, error_body("no pushed source named " + *name), std::nullopt};
    }
    std::size_t stored = 0;
    Answered answered = answer_for(*lookup.source, request, stored);
    answered.source = lookup.source->name;
    answered.stored = stored;
    return answered;
}

// The source's checks in the order that costs least first: nothing of the
// body is parsed before the sender has proven who it is.
Reply WebhookReceiver::State::answer_for(const PushedSource& source, const IncomingRequest& request,
                                         std::size_t& stored) {
    if (!source.misconfigured.empty())
        return unavailable(source.name, "source " + source.name + " is misconfigured: " + source.misconfigured,
                           spdlog::level::err);
    if (!source.enabled) return unavailable(source.name, "source " + source.name + " is paused", spdlog::level::info);
    if (request.body.size() > source.max_body_bytes)
        return refuse(source.name, 413,
                      "the body is " + std::to_string(request.body.size()) + " bytes, more than the " +
                          std::to_string(source.max_body_bytes) + " this source takes",
                      spdlog::level::warn);

    const HeaderLookup header = [&request](std::string_view name) -> std::optional<std::string> {
        if (!request.header) return std::nullopt;
        return request.header(name);
    };
    const AuthVerdict auth = authenticate(source.auth, header, request.body, environment, now());
    if (auth.kind == AuthVerdict::Kind::no_secret)
        return unavailable(source.name,
                           "the receiver's environment has no " + auth.reason + " (the source's " + source.auth.name +
                               " secret): its requests are answered 503 until the receiver runs with it",
                           spdlog::level::err);
    if (auth.kind == AuthVerdict::Kind::refused) return refuse(source.name, 401, auth.reason, spdlog::level::warn);

    const std::optional<std::string> key_header = source.key_header.empty() ? std::nullopt : header(source.key_header);
    PushedBody body = read_pushed_body(request.body, request.content_type, source, key_header);
    if (body.refusal) return refuse(source.name, 400, *body.refusal, spdlog::level::warn);
    const std::size_t events = body.events.size();
    if (events == 0) return stored_reply(source, 0, 0);
    // The queue's bound holds for one request too: admitted alone into an empty queue, it would
    // hold more events in memory than the operator allowed.
    if (events > options.max_queued_events)
        return refuse(source.name, 413,
                      "the request holds " + std::to_string(events) + " events, more than the " +
                          std::to_string(options.max_queued_events) +
                          " the receiver queues (its --max-queued-events): send them in smaller requests",
                      spdlog::level::warn);

    PushedBatch batch{source.id, source.name, std::move(body.events)};
    const CommitOutcome outcome = committer.submit(batch);
    switch (outcome.kind) {
        case CommitOutcome::Kind::stored: stored = outcome.stored; return stored_reply(source, outcome.stored, events);
        case CommitOutcome::Kind::not_accepting:
            sources.mark_stale();
            return unavailable(source.name, "source " + source.name + " no longer takes pushes (paused or removed)",
                               spdlog::level::info);
        case CommitOutcome::Kind::queue_full:
            return unavailable(source.name, "the receiver is busy: too many events wait to be stored; retry later",
                               spdlog::level::warn);
        case CommitOutcome::Kind::unavailable:  // the committer logged it, once per outage
            return {503, error_body("the database is unavailable; retry later"), options.retry_after};
        case CommitOutcome::Kind::failed:  // the committer logged it
            return {500, error_body("the events could not be stored"), std::nullopt};
    }
    return {500, error_body("the events could not be stored"), std::nullopt};
}

Reply WebhookReceiver::State::stored_reply(const PushedSource& source, std::size_t stored, std::size_t events) {
    spdlog::debug("source={} stored {} of {} pushed events", source.name, stored, events);
    const std::string body = nlohmann::json{{"stored", stored}, {"duplicates", events - stored}}.dump();
    return {stored > 0 ? 201 : 200, body, std::nullopt};
}

Reply WebhookReceiver::State::refuse(const std::string& source, int status, const std::string& message,
                                     spdlog::level::level_enum level) {
    if (const auto unlogged = refusals.admit(source, RefusalLog::Clock::now())) {
        if (*unlogged == 0) spdlog::log(level, "source={} answered {}: {}", source, status, message);
        else spdlog::log(level, "source={} answered {}: {} ({} more not logged)", source, status, message, *unlogged);
    }
    return {status, error_body(message), std::nullopt};
}

Reply WebhookReceiver::State::unavailable(const std::string& source, const std::string& message,
                                          spdlog::level::level_enum level) {
    Reply reply = refuse(source, 503, message, level);
    reply.retry_after = options.retry_after;
    return reply;
}

WebhookReceiver::WebhookReceiver(PushedSourceCatalog& catalog, PushedEventStore& store, Options options,
                                 Environment environment, Now now, ReceiverObserver* observer)
    : state_(std::make_unique<State>(catalog, store, options, std::move(environment), std::move(now), observer)) {}

WebhookReceiver::~WebhookReceiver() = default;

Reply WebhookReceiver::handle(const IncomingRequest& request) {
    Answered answered = [&]() -> Answered {
        try {
            return state_->answer(request);
        } catch (const std::exception& e) {
            spdlog::error("receiver: unexpected error on {} {}, answered 500: {}", request.method,
                          request.path.substr(0, 200), e.what());
            return Reply{500, error_body("internal error"), std::nullopt};
        }
    }();
    if (state_->observer != nullptr)
        state_->observer->answered(answered.source, answered.reply.status, answered.stored);
    return std::move(answered.reply);
}

std::size_t WebhookReceiver::largest_body_bytes() {
    return state_->sources.largest_body_bytes(PushedSourceCache::Clock::now());
}

}  // namespace tributary::webhook
