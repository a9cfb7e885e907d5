#include "push_flags.h"

#include <set>

#include "duration.h"
#include "flag_checks.h"
#include "reading_flags.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

using Method = webhook::PushAuthentication::Method;

/// An environment variable's name: what a shell can export.
void check_variable(const std::string& flag, const std::string& name) {
    const bool ok = !name.empty() &&
                    name.find_first_not_of(
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789_") == std::string::npos &&
                    !(name[0] >= '0' && name[0] <= '9');
    if (!ok) throw UsageError("invalid " + flag + " '" + name + "': the name of an environment variable");
}

/// A request header's name (RFC 9110 token characters).
void check_header_name(const std::string& flag, const std::string& name) {
    const bool ok = !name.empty() && name.find_first_not_of(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789!#$%&'*+-.^_`|~") == std::string::npos;
    if (!ok) throw UsageError("invalid " + flag + " '" + name + "': a header name");
}

/// The flags each kind may be given (besides NAME and --help).
const std::set<std::string> kPushFlags = {"--push",
                                          "--key",
                                          "--signature",
                                          "--signature-header",
                                          "--signature-prefix",
                                          "--hmac-secret-env",
                                          "--bearer-token-env",
                                          "--stripe-tolerance",
                                          "--key-header",
                                          "--max-body-bytes",
                                          "--insecure-no-auth"};
const std::set<std::string> kPublishedFlags = {"--published", "--publisher"};

/// Every flag given to `add` that `allowed` does not list, refused by name.
void refuse_others(const CLI::App& add, const std::set<std::string>& allowed, const std::string& kind) {
    for (const auto* option : add.get_options()) {
        if (option->count() == 0 || option->get_positional() || option->get_name() == "--help") continue;
        const auto name = option->get_name();
        if (allowed.count(name) == 0)
            throw UsageError(name + " is not for a " + kind + " source (see `tributary source add --help`)");
    }
}

webhook::PushAuthentication authentication(const PushFlags& f) {
    webhook::PushAuthentication auth;
    const int ways = !f.signature.empty() + !f.bearer_token_env.empty() + f.insecure_no_auth;
    if (ways == 0)
        throw UsageError(
            "a pushed source needs authentication: --signature github|stripe|hmac-hex|hmac-base64 with "
            "--hmac-secret-env VAR, or --bearer-token-env VAR; --insecure-no-auth takes anyone's events");
    if (ways > 1) throw UsageError("give one of --signature, --bearer-token-env and --insecure-no-auth");
    if (f.insecure_no_auth) return auth;
    if (!f.bearer_token_env.empty()) {
        check_variable("--bearer-token-env", f.bearer_token_env);
        auth.method = Method::bearer;
        auth.name = "bearer";
        auth.variable = f.bearer_token_env;
        return auth;
    }
    auth.method = Method::signature;
    auth.name = f.signature;
    if (f.hmac_secret_env.empty())
        throw UsageError("--signature needs --hmac-secret-env VAR (the shared secret's variable)");
    check_variable("--hmac-secret-env", f.hmac_secret_env);
    auth.variable = f.hmac_secret_env;
    const bool custom = f.signature == "hmac-hex" || f.signature == "hmac-base64";
    if (!custom && (!f.signature_header.empty() || !f.signature_prefix.empty()))
        throw UsageError("--signature-header and --signature-prefix are for --signature hmac-hex or hmac-base64");
    if (f.signature == "github") {
        auth.signature = webhook::github_signature();
    } else if (f.signature == "stripe") {
        const auto tolerance = std::chrono::duration_cast<std::chrono::seconds>(parse_duration(f.stripe_tolerance));
        if (tolerance.count() < 1 || tolerance.count() > 86400)
            throw UsageError("--stripe-tolerance must be 1s to 24h");
        auth.signature = webhook::stripe_signature(tolerance);
    } else if (custom) {
        if (f.signature_header.empty())
            throw UsageError("--signature " + f.signature + " needs --signature-header NAME");
        check_header_name("--signature-header", f.signature_header);
        if (f.signature_prefix.find_first_of("\r\n") != std::string::npos)
            throw UsageError("invalid --signature-prefix: one line");
        auth.signature.format = f.signature == "hmac-hex" ? webhook::SignatureScheme::Format::hmac_hex
                                                          : webhook::SignatureScheme::Format::hmac_base64;
        auth.signature.header = f.signature_header;
        auth.signature.prefix = f.signature_prefix;
    } else {
        throw UsageError("invalid --signature '" + f.signature + "': github, stripe, hmac-hex or hmac-base64");
    }
    return auth;
}

}  // namespace

void PushFlags::declare(CLI::App& add) {
    add.add_flag("--push", push, "a pushed source: senders POST its events to `tributary receive` (no --url)");
    add.add_flag("--published", published, "a published source: applications call tributary.publish() (no --url)");
    add.add_option("--signature", signature,
                   "pushed: requests signed with HMAC-SHA256 of the body: github, stripe, hmac-hex or hmac-base64");
    add.add_option("--signature-header", signature_header, "pushed, hmac-hex/hmac-base64: the signature's header");
    add.add_option("--signature-prefix", signature_prefix,
                   "pushed, hmac-hex/hmac-base64: text before it, e.g. sha256=");
    add.add_option("--hmac-secret-env", hmac_secret_env,
                   "pushed: the receiver's environment variable holding the shared secret (stored: its name only)");
    add.add_option("--bearer-token-env", bearer_token_env,
                   "pushed: requests carry Authorization: Bearer $VAR (stored: the variable's name only)");
    add.add_option("--stripe-tolerance", stripe_tolerance, "pushed, stripe: how old a signed time may be")
        ->capture_default_str()
        ->check(duration_value());
    add.add_option("--key-header", key_header,
                   "pushed: a request header whose value keys its events (default Idempotency-Key; github: "
                   "X-GitHub-Delivery)");
    add.add_option("--max-body-bytes", max_body_bytes, "pushed: larger requests are refused (413); default 1 MiB")
        ->check(decimal_in(1, static_cast<std::int64_t>(webhook::kLargestMaxBodyBytes)));
    add.add_flag("--insecure-no-auth", insecure_no_auth,
                 "pushed: accept requests from anyone who can reach the receiver");
    add.add_option("--publisher", publishers,
                   "published: a role whose members may publish to it (repeatable; default tributary_publisher)");
}

void PushFlags::apply_to(postgres::SourceSpec& spec, const std::vector<std::string>& keys, const CLI::App& add) const {
    if (push && published) throw UsageError("a source is --push or --published, not both");
    if (published) {
        refuse_others(add, kPublishedFlags, "published");
        spec.kind = postgres::SourceKind::published;
        spec.publishers = publishers.empty() ? std::vector<std::string>{"tributary_publisher"} : publishers;
        for (const auto& role : spec.publishers)
            if (role.empty() || role.size() > 63 || role.find_first_of("\r\n") != std::string::npos)
                throw UsageError("invalid --publisher '" + role + "': a role name (1 to 63 bytes)");
        return;
    }
    refuse_others(add, kPushFlags, "pushed");
    spec.kind = postgres::SourceKind::pushed;
    auto& p = spec.push;
    p.auth = authentication(*this);
    if (!keys.empty()) p.key = keys;
    if (p.key.size() > 16) throw UsageError("a key has at most 16 parts (--key)");
    for (const auto& pointer : p.key)
        if (const auto problem = pointer_problem(pointer); !problem.empty())
            throw UsageError("invalid --key '" + pointer + "': " + problem);
    p.key_header = !key_header.empty() ? key_header : signature == "github" ? "X-GitHub-Delivery" : "Idempotency-Key";
    check_header_name("--key-header", p.key_header);
    if (max_body_bytes > 0) p.max_body_bytes = static_cast<std::size_t>(max_body_bytes);
}

}  // namespace tributary::cli
