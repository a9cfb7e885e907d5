#include "timestamp.h"

#include <algorithm>
#include <cstdio>

namespace tributary {

namespace {

constexpr std::int64_t kMicrosPerSecond = 1000000;
constexpr std::int64_t kSecondsPerDay = 86400;
constexpr int kMaxFractionDigits = 6;

/// Days from 1970-01-01 to the civil date (proleptic Gregorian), after
/// Howard Hinnant's days_from_civil.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct CivilDate {
    std::int64_t year;
    unsigned month;
    unsigned day;
};

/// The inverse: Howard Hinnant's civil_from_days.
CivilDate civil_from_days(std::int64_t z) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

bool leap_year(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(std::int64_t y, unsigned m) {
    constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap_year(y) ? 29 : kDays[m - 1];
}

const std::int64_t kFirstMicros = days_from_civil(0, 1, 1) * kSecondsPerDay * kMicrosPerSecond;
const std::int64_t kLastSecond = (days_from_civil(10000, 1, 1)) * kSecondsPerDay - 1;

/// Reads text left to right; every read fails softly.
class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    bool done() const { return at_ == text_.size(); }
    bool peek_digit() const { return !done() && text_[at_] >= '0' && text_[at_] <= '9'; }
    bool take(char c) {
        if (done() || text_[at_] != c) return false;
        ++at_;
        return true;
    }
    /// Exactly `n` digits.
    std::optional<unsigned> digits(int n) {
        unsigned value = 0;
        for (int i = 0; i < n; ++i) {
            if (!peek_digit()) return std::nullopt;
            value = value * 10 + static_cast<unsigned>(text_[at_++] - '0');
        }
        return value;
    }
    /// One digit or more; the first `keep` as a number padded to `keep`
    /// digits, the rest dropped. Counts the digits kept.
    std::optional<std::int64_t> fraction(int keep, int& kept) {
        if (!peek_digit()) return std::nullopt;
        std::int64_t value = 0;
        kept = 0;
        for (; peek_digit(); ++at_)
            if (kept < keep) {
                value = value * 10 + (text_[at_] - '0');
                ++kept;
            }
        for (int i = kept; i < keep; ++i) value *= 10;
        return value;
    }

private:
    std::string_view text_;
    std::size_t at_ = 0;
};

std::optional<Timestamp> parse_unix_seconds(std::string_view text) {
    Reader in(text);
    std::int64_t seconds = 0;
    if (!in.peek_digit()) return std::nullopt;
    while (in.peek_digit()) {
        seconds = seconds * 10 + *in.digits(1);
        if (seconds > kLastSecond) return std::nullopt;
    }
    std::int64_t micros = 0;
    int kept = 0;
    if (in.take('.')) {
        const auto fraction = in.fraction(kMaxFractionDigits, kept);
        if (!fraction) return std::nullopt;
        micros = *fraction;
    }
    if (!in.done()) return std::nullopt;
    return Timestamp{seconds * kMicrosPerSecond + micros, Timestamp::Format::unix_seconds, kept};
}

/// The zone's offset east of UTC in seconds: Z, +HH:MM, -HH:MM, +HHMM, -HHMM.
std::optional<std::int64_t> parse_zone(Reader& in) {
    if (in.take('Z') || in.take('z')) return 0;
    int sign = 0;
    if (in.take('+')) sign = 1;
    else if (in.take('-')) sign = -1;
    else return std::nullopt;
    const auto hours = in.digits(2);
    if (!hours) return std::nullopt;
    in.take(':');
    const auto minutes = in.digits(2);
    if (!minutes || *hours > 23 || *minutes > 59) return std::nullopt;
    return sign * static_cast<std::int64_t>(*hours * 3600 + *minutes * 60);
}

std::optional<Timestamp> parse_iso8601(std::string_view text) {
    Reader in(text);
    const auto year = in.digits(4);
    if (!year || !in.take('-')) return std::nullopt;
    const auto month = in.digits(2);
    if (!month || !in.take('-')) return std::nullopt;
    const auto day = in.digits(2);
    if (!day || !(in.take('T') || in.take('t') || in.take(' '))) return std::nullopt;
    const auto hour = in.digits(2);
    if (!hour || !in.take(':')) return std::nullopt;
    const auto minute = in.digits(2);
    if (!minute || !in.take(':')) return std::nullopt;
    const auto second = in.digits(2);
    if (!second) return std::nullopt;
    std::int64_t micros = 0;
    int kept = 0;
    if (in.take('.') || in.take(',')) {
        const auto fraction = in.fraction(kMaxFractionDigits, kept);
        if (!fraction) return std::nullopt;
        micros = *fraction;
    }
    const auto offset = parse_zone(in);
    if (!offset || !in.done()) return std::nullopt;
    if (*month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month)) return std::nullopt;
    // 60: a leap second, read as the first second of the next minute.
    if (*hour > 23 || *minute > 59 || *second > 60) return std::nullopt;

    const std::int64_t seconds =
        days_from_civil(*year, *month, *day) * kSecondsPerDay + *hour * 3600 + *minute * 60 + *second - *offset;
    return Timestamp{seconds * kMicrosPerSecond + micros, Timestamp::Format::iso8601, kept};
}

/// Floor division, for instants before the epoch.
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

}  // namespace

Timestamp Timestamp::minus(std::chrono::seconds by) const {
    Timestamp earlier = *this;
    earlier.micros -= static_cast<std::int64_t>(by.count()) * kMicrosPerSecond;
    return earlier;
}

std::optional<Timestamp> parse_timestamp(std::string_view text) {
    // The longest timestamp worth reading has nanoseconds and an offset
    // (35 characters); a longer one (a fraction of a thousand digits) would
    // only be a watermark too long to store with every batch.
    constexpr std::size_t kMaxLength = 64;
    if (text.size() > kMaxLength) return std::nullopt;
    if (!text.empty() && text.find('-') != std::string_view::npos) return parse_iso8601(text);
    return parse_unix_seconds(text);
}

std::string format_timestamp(const Timestamp& t) {
    if (t.format == Timestamp::Format::unix_seconds)
        return std::to_string(t.micros < 0 ? 0 : floor_div(t.micros, kMicrosPerSecond));

    const std::int64_t micros = std::clamp(t.micros, kFirstMicros, kLastSecond * kMicrosPerSecond);
    const std::int64_t seconds = floor_div(micros, kMicrosPerSecond);
    const std::int64_t days = floor_div(seconds, kSecondsPerDay);
    const std::int64_t in_day = seconds - days * kSecondsPerDay;
    const auto date = civil_from_days(days);
    char text[64];
    int n = std::snprintf(text, sizeof text, "%04lld-%02u-%02uT%02lld:%02lld:%02lld", static_cast<long long>(date.year),
                          date.month, date.day, static_cast<long long>(in_day / 3600),
                          static_cast<long long>(in_day / 60 % 60), static_cast<long long>(in_day % 60));
    std::string out(text, static_cast<std::size_t>(n));
    if (t.fraction_digits > 0) {
        const auto fraction = std::to_string(micros - seconds * kMicrosPerSecond + kMicrosPerSecond);  // "1dddddd"
        out += '.';
        out += fraction.substr(1, static_cast<std::size_t>(std::min(t.fraction_digits, kMaxFractionDigits)));
    }
    return out + 'Z';
}

}  // namespace tributary
