#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reading.h"

namespace tributary {

/// Credentials read from the loader's environment at request time, so that
/// the catalogue holds only the variables' names. A variable that is not set
/// fails the source with a message naming it.
struct EnvAuth {
    std::string bearer;      ///< Authorization: Bearer $VAR
    std::string basic_user;  ///< Authorization: Basic base64($USER:$PASS)
    std::string basic_password;
    std::vector<std::pair<std::string, std::string>> headers;  ///< header name, variable
    std::vector<std::pair<std::string, std::string>> query;    ///< query parameter, variable

    /// OAuth2 client credentials (RFC 6749 §4.4): the token is fetched from
    /// `token_url` and shared by every loader through the database.
    struct OAuth2 {
        std::string token_url;
        std::string client_id;      ///< variable holding the client id
        std::string client_secret;  ///< variable holding the client secret
        std::string scope;          ///< empty: none sent
    };
    std::optional<OAuth2> oauth2;

    bool empty() const { return bearer.empty() && basic_user.empty() && headers.empty() && query.empty() && !oauth2; }
};

/// Where and how a source is asked for events. Only the fetcher reads it.
struct Endpoint {
    std::string url;
    /// Extra request headers, each "Name: value" (auth tokens live here, so
    /// never log them).
    std::vector<std::string> headers;
    EnvAuth auth;
    std::chrono::milliseconds timeout{10000};
};

/// A registered source, as the loader sees it.
struct Source {
    int id = 0;
    std::string name;
    Endpoint endpoint;
    RecordLayout layout;
    Paging paging;
    std::chrono::milliseconds interval{200};  ///< minimum pause between two requests
    int batch_size = 1000;                    ///< `limit` of one request
    /// Why the catalogue's row for this source cannot be used (options not
    /// as `source add` writes them); empty when it can. The fetcher fails
    /// such a source with this message, so that status shows it.
    std::string misconfigured;
    /// Counts the edits of its settings (`source edit`): a claim made with
    /// settings older than the catalogue's is refused, so that one turn
    /// never mixes old settings with a cursor rewound for new ones.
    std::int64_t revision = 0;

    /// Events are keyed by an integer id that only grows (today's protocol
    /// and `--paginate after-id`); every other style keys them by text.
    bool keyed_by_id() const { return paging.style == PagingStyle::after_id; }
};

}  // namespace tributary
