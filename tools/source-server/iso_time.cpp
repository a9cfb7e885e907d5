#include "iso_time.h"

#include <cstdio>
#include <ctime>

namespace tributary::source_server {
namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string date_time(std::int64_t unix_s) {
    time_t t = static_cast<time_t>(unix_s);
    tm parts{};
    gmtime_r(&t, &parts);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1,
                  parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
    return buf;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = floor_div(y, 400);
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view text, std::size_t at, std::size_t n, int& out) {
    if (at + n > text.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (text[i] < '0' || text[i] > '9') return false;
        out = out * 10 + (text[i] - '0');
    }
    return true;
}

std::optional<std::int64_t> parse_unix_seconds(std::string_view text) {
    std::int64_t whole = 0;
    std::size_t i = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        if (whole > 1'000'000'000'000) return std::nullopt;
        whole = whole * 10 + (text[i] - '0');
    }
    if (i == 0) return std::nullopt;
    std::int64_t ms = whole * 1000;
    if (i == text.size()) return ms;
    if (text[i] != '.' || i + 1 == text.size()) return std::nullopt;
    std::int64_t scale = 100;
    for (++i; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
        ms += (text[i] - '0') * scale;
        scale /= 10;
    }
    return ms;
}

std::optional<std::int64_t> parse_iso(std::string_view text) {
    int year, month, day, hour, minute, second;
    if (!digits(text, 0, 4, year) || text.size() < 19 || text[4] != '-' || !digits(text, 5, 2, month) ||
        text[7] != '-' || !digits(text, 8, 2, day) || (text[10] != 'T' && text[10] != 't' && text[10] != ' ') ||
        !digits(text, 11, 2, hour) || text[13] != ':' || !digits(text, 14, 2, minute) || text[16] != ':' ||
        !digits(text, 17, 2, second)) {
        return std::nullopt;
    }
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
    std::size_t i = 19;
    std::int64_t ms = 0;
    if (i < text.size() && text[i] == '.') {
        std::int64_t scale = 100;
        std::size_t first = ++i;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            ms += (text[i] - '0') * scale;
            scale /= 10;
        }
        if (i == first) return std::nullopt;
    }
    std::int64_t offset_min = 0;
    if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
        ++i;
    } else if (i < text.size() && (text[i] == '+' || text[i] == '-' || text[i] == ' ')) {
        int oh, om;
        if (!digits(text, i + 1, 2, oh) || i + 3 >= text.size() || text[i + 3] != ':' || !digits(text, i + 4, 2, om))
            return std::nullopt;
        offset_min = (oh * 60 + om) * (text[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return std::nullopt;  // a time without a zone is ambiguous
    }
    if (i != text.size()) return std::nullopt;
    std::int64_t seconds = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
                           hour * 3600 + minute * 60 + second - offset_min * 60;
    return seconds * 1000 + ms;
}

}  // namespace

std::string iso_ms(std::int64_t unix_ms) {
    std::int64_t seconds = floor_div(unix_ms, 1000);
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03d", static_cast<int>(unix_ms - seconds * 1000));
    return date_time(seconds) + frac + "Z";
}

std::string iso_seconds(std::int64_t unix_s) { return date_time(unix_s) + "Z"; }

std::string iso_seconds_offset(std::int64_t unix_s) { return date_time(unix_s) + "+00:00"; }

std::optional<std::int64_t> parse_time_param(std::string_view text) {
    if (text.size() >= 19 && text[4] == '-') return parse_iso(text);
    return parse_unix_seconds(text);
}

}  // namespace tributary::source_server
