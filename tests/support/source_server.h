#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/child_process.h"

namespace tributary::testing {

/// The project's source server (tools/source-server) as a child process.
class SourceServer {
public:
    explicit SourceServer(const std::vector<std::string>& options);

    const std::string& base_url() const { return base_url_; }
    const std::string& host() const { return host_; }
    int port() const { return port_; }
    std::string events_url(const std::string& source) const { return base_url_ + "/sources/" + source + "/events"; }
    /// A generic style route: STYLE is after-key, cursor, link, time, page or offset.
    std::string style_url(const std::string& style, const std::string& source) const {
        return base_url_ + "/styles/" + style + "/" + source;
    }
    /// Every event the source has produced: [{"id", "payload"}, ...].
    nlohmann::json truth(const std::string& source) const;
    /// Every record as the route of `style` (a style or a fixture: github, stripe, ...) serves
    /// it, as the server's text: a JSON array whose records are byte-identical to the route's.
    std::string truth_text(const std::string& source, const std::string& style) const;
    /// GET /_stats.
    nlohmann::json stats() const;
    /// POST /_oauth/revoke: every token issued so far stops working.
    void revoke_tokens() const;
    /// Requests the source received: [{"arrival_us", ...}, ...].
    nlohmann::json requests(const std::string& source) const;
    void set_fault(const std::string& source, const std::string& mode) const;

private:
    nlohmann::json get(const std::string& path) const;
    std::string get_text(const std::string& path) const;

    std::unique_ptr<ChildProcess> process_;
    std::string base_url_;
    std::string host_;
    int port_ = 0;
};

}  // namespace tributary::testing
