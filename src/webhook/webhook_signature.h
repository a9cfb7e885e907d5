#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::webhook {

/// How a pushing source's sender signs a request: an HMAC-SHA256 of the raw
/// body with a secret both sides hold, in a request header. Checked before
/// anything of the body is parsed or stored.
struct SignatureScheme {
    enum class Format {
        hmac_hex,     ///< PREFIX + hex of HMAC(body): GitHub's X-Hub-Signature-256: sha256=...
        hmac_base64,  ///< PREFIX + base64 of HMAC(body): Shopify's X-Shopify-Hmac-Sha256
        stripe,       ///< t=UNIX,v1=hex of HMAC(t + "." + body)[,v1=...]: Stripe-Signature
    };
    Format format = Format::hmac_hex;
    std::string header;  ///< the request header that holds the signature
    std::string prefix;  ///< the text before the signature in it, e.g. "sha256="
    /// Stripe: how far the signed time may be from now, either way (against
    /// a captured request sent again later).
    std::chrono::seconds tolerance{300};
};

/// GitHub's: X-Hub-Signature-256: sha256=<hex>.
SignatureScheme github_signature();

/// Stripe's: Stripe-Signature: t=<unix time>,v1=<hex>, the time within
/// `tolerance` of now (Stripe's libraries default to 5 minutes).
SignatureScheme stripe_signature(std::chrono::seconds tolerance = std::chrono::seconds(300));

/// What a request's signature turned out to be. Everything but `valid` is
/// answered 401 and stores nothing.
enum class SignatureVerdict {
    valid,
    missing,    ///< no such header
    malformed,  ///< not of the scheme's form (prefix, encoding, Stripe's fields)
    mismatch,   ///< well formed, but not the body's signature with this secret
    stale,      ///< Stripe: the right signature, of a time outside the tolerance
};

/// Checks `header_value` (the scheme's header as received, none when the
/// request had none) against `body` signed with `secret`; `now` for Stripe's
/// tolerance. Compares in constant time: how long it takes tells nothing
/// about how much of a forged signature was right.
SignatureVerdict check_signature(const SignatureScheme& scheme, std::optional<std::string_view> header_value,
                                 std::string_view body, std::string_view secret,
                                 std::chrono::system_clock::time_point now);

/// What was wrong, for a 401's body and the log: never the secret, nor the
/// signature that was expected.
std::string describe(SignatureVerdict verdict, const SignatureScheme& scheme);

}  // namespace tributary::webhook
