#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::console {

/// The console's admin token: what every action (POST) must present as
/// `Authorization: Bearer <token>`. Only its SHA-256 is kept, and a presented
/// token is compared by digest in constant time: digests are of one length
/// whatever was presented, so neither the time taken nor an early exit on a
/// length mismatch tells anything about the token.
class AdminToken {
public:
    /// Throws std::invalid_argument when `token` is empty.
    explicit AdminToken(std::string_view token);

    /// From the environment variable `variable` (a trailing newline
    /// trimmed). Throws std::runtime_error naming the variable when it is
    /// unset or empty: a console asked for actions never starts read-only by
    /// surprise.
    static AdminToken from_environment(const std::string& variable);
    /// From the file at `path` (a trailing newline trimmed). Throws
    /// std::runtime_error naming the file when it cannot be read or is empty.
    static AdminToken from_file(const std::string& path);

    bool matches(std::string_view presented) const;

private:
    std::array<unsigned char, 32> digest_{};
};

/// The token of an `Authorization: Bearer <token>` header value (the scheme
/// in any case), or nothing for any other value.
std::optional<std::string_view> bearer_token(std::string_view authorization);

/// `text` without its trailing newlines (\n, \r\n).
std::string_view without_trailing_newlines(std::string_view text);

}  // namespace tributary::console
