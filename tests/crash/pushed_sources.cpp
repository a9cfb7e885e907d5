#include "pushed_sources.h"

#include <random>

namespace tributary::crash {

namespace {

std::string random_secret(std::mt19937_64& random) {
    static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::uniform_int_distribution<int> pick(0, sizeof kAlphabet - 2);
    std::string secret;
    for (int i = 0; i < 32; ++i) secret += kAlphabet[pick(random)];
    return secret;
}

}  // namespace

std::vector<PushedSourceSpec> pushed_sources(int count, unsigned long long seed) {
    std::mt19937_64 random(seed ^ 0x70757368ULL);  // "push": not the scheduler's sequence
    std::vector<PushedSourceSpec> out;
    for (int i = 0; i < count; ++i) {
        PushedSourceSpec s;
        s.name = "crash.push-" + std::to_string(i);
        const bool github = i % 2 == 0;
        s.auth = github ? "github" : "bearer";
        s.variable = "CRASH_PUSH_" + std::to_string(i) + (github ? "_HMAC_SECRET" : "_BEARER_TOKEN");
        s.secret = random_secret(random);
        // The documented defaults of `source add --push` (src/cli/push_flags.cpp).
        s.key_header = github ? "X-GitHub-Delivery" : "Idempotency-Key";
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::string> source_add_args(const PushedSourceSpec& source) {
    // The key pointer is the default (/id); said anyway, as the sender relies on it.
    std::vector<std::string> args{"source", "add", source.name, "--push", "--key", "/id"};
    if (source.auth == "github") {
        args.insert(args.end(), {"--signature", "github", "--hmac-secret-env", source.variable});
    } else {
        args.insert(args.end(), {"--bearer-token-env", source.variable});
    }
    return args;
}

std::vector<std::string> receiver_environment(const std::vector<PushedSourceSpec>& sources) {
    std::vector<std::string> env;
    for (const auto& s : sources) env.push_back(s.variable + "=" + s.secret);
    return env;
}

}  // namespace tributary::crash
