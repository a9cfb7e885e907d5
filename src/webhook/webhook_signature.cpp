#include "webhook_signature.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <vector>

#include "hmac_sha256.h"

namespace tributary::webhook {

namespace {

std::string_view trimmed(std::string_view text) {
    const auto blank = [](char ch) { return ch == ' ' || ch == '\t'; };
    while (!text.empty() && blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && blank(text.back())) text.remove_suffix(1);
    return text;
}

bool is_hex(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); });
}

std::string lowercase(std::string_view text) {
    std::string out(text);
    for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

/// Stripe's header: its time (as sent: the signed text) and every v1.
struct StripeFields {
    std::string_view time;
    std::vector<std::string_view> signatures;
};

std::optional<StripeFields> stripe_fields(std::string_view header) {
    StripeFields fields;
    while (!header.empty()) {
        const auto comma = header.find(',');
        const auto item = trimmed(header.substr(0, comma));
        header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
        const auto equals = item.find('=');
        if (equals == std::string_view::npos) return std::nullopt;
        const auto key = item.substr(0, equals);
        const auto value = item.substr(equals + 1);
        if (key == "t") {
            if (!fields.time.empty()) return std::nullopt;  // two times: which one was signed?
            fields.time = value;
        } else if (key == "v1") {
            fields.signatures.push_back(value);
        }  // v0 and anything newer: not ours to check
    }
    const bool digits =
        !fields.time.empty() && fields.time.size() <= 12 &&
        std::all_of(fields.time.begin(), fields.time.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!digits || fields.signatures.empty()) return std::nullopt;
    return fields;
}

SignatureVerdict check_stripe(const SignatureScheme& scheme, std::string_view header, std::string_view body,
                              std::string_view secret, std::chrono::system_clock::time_point now) {
    const auto fields = stripe_fields(header);
    if (!fields) return SignatureVerdict::malformed;
    std::string signed_text(fields->time);
    signed_text += '.';
    signed_text += body;
    const auto expected = to_hex(hmac_sha256(secret, signed_text));
    bool matched = false;
    for (const auto signature : fields->signatures)
        matched |= equal_in_constant_time(lowercase(signature), expected);  // every one compared: no early exit
    if (!matched) return SignatureVerdict::mismatch;
    std::int64_t seconds = 0;
    std::from_chars(fields->time.data(), fields->time.data() + fields->time.size(), seconds);
    const auto signed_at = std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
    const auto apart = now > signed_at ? now - signed_at : signed_at - now;
    return apart > scheme.tolerance ? SignatureVerdict::stale : SignatureVerdict::valid;
}

SignatureVerdict check_hmac(const SignatureScheme& scheme, std::string_view header, std::string_view body,
                            std::string_view secret) {
    if (header.substr(0, scheme.prefix.size()) != scheme.prefix) return SignatureVerdict::malformed;
    const auto signature = header.substr(scheme.prefix.size());
    const auto digest = hmac_sha256(secret, body);
    if (scheme.format == SignatureScheme::Format::hmac_hex) {
        if (!is_hex(signature)) return SignatureVerdict::malformed;
        return equal_in_constant_time(lowercase(signature), to_hex(digest)) ? SignatureVerdict::valid
                                                                            : SignatureVerdict::mismatch;
    }
    if (signature.empty()) return SignatureVerdict::malformed;
    return equal_in_constant_time(signature, to_base64(digest)) ? SignatureVerdict::valid : SignatureVerdict::mismatch;
}

}  // namespace

SignatureScheme github_signature() {
    SignatureScheme scheme;
    scheme.format = SignatureScheme::Format::hmac_hex;
    scheme.header = "X-Hub-Signature-256";
    scheme.prefix = "sha256=";
    return scheme;
}

SignatureScheme stripe_signature(std::chrono::seconds tolerance) {
    SignatureScheme scheme;
    scheme.format = SignatureScheme::Format::stripe;
    scheme.header = "Stripe-Signature";
    scheme.tolerance = tolerance;
    return scheme;
}

SignatureVerdict check_signature(const SignatureScheme& scheme, std::optional<std::string_view> header_value,
                                 std::string_view body, std::string_view secret,
                                 std::chrono::system_clock::time_point now) {
    if (!header_value) return SignatureVerdict::missing;
    const auto header = trimmed(*header_value);
    if (header.empty()) return SignatureVerdict::missing;
    if (scheme.format == SignatureScheme::Format::stripe) return check_stripe(scheme, header, body, secret, now);
    return check_hmac(scheme, header, body, secret);
}

std::string describe(SignatureVerdict verdict, const SignatureScheme& scheme) {
    switch (verdict) {
        case SignatureVerdict::valid: return "the signature is valid";
        case SignatureVerdict::missing: return "no " + scheme.header + " header: the request is not signed";
        case SignatureVerdict::malformed:
            return scheme.format == SignatureScheme::Format::stripe
                       ? "the " + scheme.header + " header is not of the form t=<unix time>,v1=<hex>"
                       : "the " + scheme.header + " header is not of the form " + scheme.prefix + "<signature>";
        case SignatureVerdict::mismatch:
            return "the " + scheme.header + " header is not the body's signature with this source's secret";
        case SignatureVerdict::stale:
            return "the " + scheme.header + " header was signed more than " + std::to_string(scheme.tolerance.count()) +
                   " s from now (a replay?)";
    }
    return "unknown verdict";
}

}  // namespace tributary::webhook
