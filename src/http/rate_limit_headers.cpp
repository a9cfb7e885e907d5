#include "rate_limit_headers.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include <spdlog/fmt/fmt.h>

namespace tributary {
namespace {

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

/// A decimal integer, optionally negative; nothing for anything else
/// (including overflow past 18 digits, which no sane header reaches).
std::optional<long long> integer(std::string_view raw) {
    std::string_view text = trimmed(raw);
    const bool negative = !text.empty() && text[0] == '-';
    if (negative) text.remove_prefix(1);
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    long long value = 0;
    for (char c : text) value = value * 10 + (c - '0');
    return negative ? -value : value;
}

/// A header value shown in a note: short and printable.
std::string shown(std::string_view value) {
    std::string out(value.substr(0, 40));
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return value.size() > 40 ? out + "..." : out;
}

struct Reading {
    std::optional<long long> remaining;
    std::optional<long long> reset_seconds;  ///< from now
    std::string note;
};

/// `seconds` clamped to [0, 24 h], with a note when it had to be.
RateLimitWait clamped(long long seconds, std::string note, const char* what) {
    const long long max = kMaxRateLimitWait.count();
    if (seconds < 0 || seconds > max) {
        if (!note.empty()) note += "; ";
        note += fmt::format("{} of {} s clamped to {} s", what, seconds, std::clamp(seconds, 0LL, max));
    }
    return {std::chrono::seconds(std::clamp(seconds, 0LL, max)), std::move(note)};
}

RateLimitWait wait_for(const Reading& reading, const char* what) {
    if (!reading.remaining || *reading.remaining > 0) return {std::chrono::seconds(0), reading.note};
    if (!reading.reset_seconds) {
        std::string note = reading.note;
        if (note.empty()) note = fmt::format("{}: remaining 0 without a usable reset: not waiting", what);
        return {std::chrono::seconds(0), note};
    }
    return clamped(*reading.reset_seconds, reading.note, what);
}

/// One number header; a note when it is present but not a number.
std::optional<long long> number_header(const HeaderLookup& header, const char* name, std::string& note) {
    const auto value = header(name);
    if (!value) return std::nullopt;
    const auto number = integer(*value);
    if (!number) {
        if (!note.empty()) note += "; ";
        note += fmt::format("{} \"{}\" is not a number", name, shown(*value));
    }
    return number;
}

// ---- the structured-field forms -------------------------------------------

struct Member {
    std::string name;                  ///< the item: a policy name ("default"), or a key for the old form
    std::optional<std::string> value;  ///< old form: key=value
    std::vector<std::pair<std::string, std::string>> params;  ///< ;key=value
};

std::string unquoted(std::string_view s) {
    s = trimmed(s);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return std::string(s.substr(1, s.size() - 2));
    return std::string(s);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

/// Splits at `separator` outside quoted strings.
std::vector<std::string_view> split_outside_quotes(std::string_view s, char separator) {
    std::vector<std::string_view> parts;
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && quoted) ++i;
        else if (s[i] == '"') quoted = !quoted;
        else if (s[i] == separator && !quoted) {
            parts.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    parts.push_back(s.substr(start));
    return parts;
}

std::vector<Member> members(std::string_view header) {
    std::vector<Member> out;
    for (std::string_view raw : split_outside_quotes(header, ',')) {
        const auto pieces = split_outside_quotes(raw, ';');
        Member member;
        const std::string_view item = trimmed(pieces[0]);
        const auto eq = item.find('=');
        member.name = lower(unquoted(item.substr(0, eq)));
        if (eq != std::string_view::npos) member.value = unquoted(item.substr(eq + 1));
        for (std::size_t i = 1; i < pieces.size(); ++i) {
            const std::string_view param = trimmed(pieces[i]);
            const auto at = param.find('=');
            member.params.emplace_back(lower(trimmed(param.substr(0, at))),
                                       at == std::string_view::npos ? "?1" : unquoted(param.substr(at + 1)));
        }
        if (!member.name.empty()) out.push_back(std::move(member));
    }
    return out;
}

std::optional<std::string> param(const Member& member, const char* key) {
    for (const auto& [name, value] : member.params)
        if (name == key) return value;
    return std::nullopt;
}

std::optional<long long> number_param(const Member& member, const char* key, std::string& note) {
    const auto value = param(member, key);
    if (!value) return std::nullopt;
    const auto number = integer(*value);
    if (!number) {
        if (!note.empty()) note += "; ";
        note += fmt::format("RateLimit {};{}=\"{}\" is not a number", member.name, key, shown(*value));
    }
    return number;
}

/// Older drafts: `RateLimit: limit=100, remaining=0, reset=30`.
RateLimitWait key_value_form(const std::vector<Member>& parsed) {
    Reading reading;
    for (const auto& member : parsed) {
        if (!member.value) continue;
        const auto number = integer(*member.value);
        if ((member.name == "remaining" || member.name == "reset") && !number) {
            if (!reading.note.empty()) reading.note += "; ";
            reading.note += fmt::format("RateLimit {}=\"{}\" is not a number", member.name, shown(*member.value));
        }
        if (member.name == "remaining") reading.remaining = number;
        if (member.name == "reset") reading.reset_seconds = number;
    }
    return wait_for(reading, "RateLimit reset");
}

/// `RateLimit: "policy";r=0;t=30`: the longest wait of the policies spent. A
/// spent policy without t waits its RateLimit-Policy window (w), the most a
/// window can take.
RateLimitWait policy_form(const std::vector<Member>& parsed, const HeaderLookup& header) {
    std::vector<Member> policies;
    if (const auto policy_header = header("RateLimit-Policy")) policies = members(*policy_header);
    RateLimitWait longest;
    std::string note;
    for (const auto& member : parsed) {
        const auto remaining = number_param(member, "r", note);
        if (!remaining || *remaining > 0) continue;
        auto reset = number_param(member, "t", note);
        if (!reset)
            for (const auto& policy : policies)
                if (policy.name == member.name) reset = number_param(policy, "w", note);
        Reading reading{remaining, reset, note};
        RateLimitWait wait = wait_for(reading, "RateLimit t");
        note = wait.note;
        longest.wait = std::max(longest.wait, wait.wait);
    }
    longest.note = note;
    return longest;
}

}  // namespace

RateLimitWait rate_limit_wait(const HeaderLookup& header, std::time_t now) {
    if (const auto structured = header("RateLimit")) {
        const auto parsed = members(*structured);
        const bool key_value = std::any_of(parsed.begin(), parsed.end(), [](const Member& m) { return m.value; });
        return key_value ? key_value_form(parsed) : policy_form(parsed, header);
    }
    Reading reading;
    if (header("RateLimit-Remaining")) {
        reading.remaining = number_header(header, "RateLimit-Remaining", reading.note);
        reading.reset_seconds = number_header(header, "RateLimit-Reset", reading.note);
        return wait_for(reading, "RateLimit-Reset");
    }
    if (header("X-RateLimit-Remaining")) {
        reading.remaining = number_header(header, "X-RateLimit-Remaining", reading.note);
        reading.reset_seconds = number_header(header, "X-RateLimit-Reset", reading.note);
        if (reading.reset_seconds && *reading.reset_seconds >= kUnixTimeFloor)
            // A reset already past is a race with the window's end, not absurd.
            reading.reset_seconds = std::max(0LL, *reading.reset_seconds - static_cast<long long>(now));
        return wait_for(reading, "X-RateLimit-Reset");
    }
    return {};
}

}  // namespace tributary
