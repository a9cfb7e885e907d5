#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "postgres/sql_errors.h"

namespace tributary::cli {

// One set of rules for every integer, duration and URL flag, so that a typo
// or an unset shell variable is an error (exit 2, naming the flag) instead
// of a value nobody meant. CLI11 alone takes `0x10`, `+5` and ` 5` as
// integers (strtoll, base 0) and clamps an overflow to the type's limit.

/// A CLI11 check: the value is plain decimal digits (a leading '-' only
/// where `min` is negative) and lies within [min, max]. Run before CLI11's
/// own conversion, so nothing else gets through.
CLI::Validator decimal_in(std::int64_t min, std::int64_t max);

/// A CLI11 check: the value is a duration parse_duration() takes; an empty
/// value is refused (it does not mean "no limit").
CLI::Validator duration_value();

/// Why `url` is not an absolute http:// or https:// URL of printable ASCII
/// without spaces (a CR/LF would split a log line, a control byte reach a
/// request line); empty when it is one.
std::string url_problem(const std::string& url);

/// A value the SQL API refuses (postgres::InvalidRequest) is named by its
/// message the way the API's caller gave it ("invalid position 'x'": the
/// function's p_from); on the command line, the flag that carried it says
/// more. `refusal` is how such a message starts, `flag` how the user gave
/// the value: {"invalid position", "--to"}.
struct CarriedBy {
    const char* refusal;
    const char* flag;
};

/// The message with the flag in front ("--to: invalid position 'x'") when it
/// starts with one of `flags`' refusals; else the message as it is.
std::string naming_the_flag(const std::vector<CarriedBy>& flags, const std::string& message);

/// Runs `call`; an InvalidRequest comes out naming the flag (naming_the_flag).
template <typename Call>
auto naming_the_flag(const std::vector<CarriedBy>& flags, Call&& call) -> decltype(call()) {
    try {
        return call();
    } catch (const postgres::InvalidRequest& e) {
        throw postgres::InvalidRequest(naming_the_flag(flags, e.what()));
    }
}

}  // namespace tributary::cli
