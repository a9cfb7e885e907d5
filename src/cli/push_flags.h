#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "postgres/source_records.h"

namespace tributary::cli {

/// `source add`'s flags for sources that are not asked (docs/sources.md
/// "Pushed sources", "Published sources"): --push with how its requests are
/// authenticated and keyed, or --published with who may publish.
struct PushFlags {
    bool push = false;
    bool published = false;
    std::string signature;  ///< github, stripe, hmac-hex, hmac-base64
    std::string signature_header, signature_prefix;
    std::string hmac_secret_env;
    std::string bearer_token_env;
    std::string stripe_tolerance = "5m";
    std::string key_header;
    std::int64_t max_body_bytes = 0;  ///< 0: the default
    bool insecure_no_auth = false;
    std::vector<std::string> publishers;

    /// Declares the flags on `add`.
    void declare(CLI::App& add);
    /// Whether the source is pushed or published rather than asked.
    bool any() const { return push || published; }
    /// Fills `spec` for a pushed or published source: its kind, receiving or
    /// publishers, with `keys` (--key) for a pushed one. Refuses any flag of
    /// `add` that such a source has no use for (a URL, paging, timing), and
    /// a pushed source without authentication unless --insecure-no-auth.
    void apply_to(postgres::SourceSpec& spec, const std::vector<std::string>& keys, const CLI::App& add) const;
};

}  // namespace tributary::cli
