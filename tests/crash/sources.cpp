#include "sources.h"

#include "control_http.h"

namespace tributary::crash {

namespace {

std::vector<std::string> server_options(const SourcePlan& plan) {
    return {"--sources",       std::to_string(plan.healthy + plan.hostile_capable),
            "--prefix",        "crash.src-",
            "--backlog",       std::to_string(plan.backlog),
            "--rate",          std::to_string(plan.rate),
            "--max-events",    std::to_string(plan.max_events),
            "--payload-bytes", std::to_string(plan.payload_bytes),
            "--threads",       std::to_string(plan.threads)};
}

}  // namespace

const std::vector<HostileMode>& hostile_modes() {
    // States and causes as the loader documents them (docs/sources.md, "What tributary does with each answer").
    static const std::vector<HostileMode> kModes{
        {"truncated", "transient", {"JSON"}, false},
        {"malformed", "transient", {"JSON"}, false},
        {"not-json", "transient", {"content type"}, false},
        {"wrong-content-type", "transient", {"content type"}, false},
        // 200 MiB against a 64 MiB limit: refused by size, or by the source's timeout first.
        {"huge", "transient", {"larger than", "timed out"}, false},
        {"slow-body", "transient", {"timed out"}, false},
        {"deep-nesting", "transient", {"nest"}, false},
        {"out-of-order", "failing", {"increasing"}, true},
        {"at-or-below-cursor", "failing", {"cursor"}, true},
        {"missing-id", "failing", {"id"}, true},
        {"string-id", "failing", {"string"}, true},
        {"float-id", "failing", {"floating"}, true},
        {"nul-in-payload", "failing", {"U+0000"}, true},
        {"http-500", "transient", {"500"}, false},
        {"http-503-bare", "transient", {"503"}, false},
        {"http-404", "failing", {"404"}, true},
        {"http-429", "throttled", {"429"}, false},
        {"http-429-date", "throttled", {"429"}, false},
        {"http-503", "throttled", {"503"}, false},
    };
    return kModes;
}

Sources::Sources(const SourcePlan& plan) : plan_(plan), server_(server_options(plan)) {
    for (int i = 0; i < plan.healthy + plan.hostile_capable; ++i) {
        const std::string name = "crash.src-" + std::to_string(i);
        all_.push_back(name);
        (i < plan.healthy ? healthy_ : hostile_capable_).push_back(name);
        style_[name] = i < plan.healthy ? &healthy_style(i) : &after_id_style();
    }
}

void Sources::set_fault(const std::string& name, const std::string& mode) const { server_.set_fault(name, mode); }

nlohmann::json Sources::stats() const { return nlohmann::json::parse(http_get(base_url(), "/_stats", 10)); }

std::map<std::string, long> Sources::produced() const {
    std::map<std::string, long> out;
    const auto s = stats();
    for (const auto& [name, row] : s.at("per_source").items()) out[name] = row.at("produced").get<long>();
    return out;
}

nlohmann::json Sources::requests(const std::string& name) const {
    return nlohmann::json::parse(http_get(base_url(), "/_requests?source=" + name));
}

}  // namespace tributary::crash
