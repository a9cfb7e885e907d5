#include "flag_checks.h"

#include <charconv>

#include "duration.h"
#include "usage_error.h"

namespace tributary::cli {

CLI::Validator decimal_in(std::int64_t min, std::int64_t max) {
    const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    return CLI::Validator(
        [min, max, range](std::string& text) -> std::string {
            const bool negative = !text.empty() && text[0] == '-' && min < 0;
            const std::size_t digits_from = negative ? 1 : 0;
            if (text.size() == digits_from || text.find_first_not_of("0123456789", digits_from) != std::string::npos)
                return "'" + text + "' is not a decimal integer (digits only, no sign, spaces or 0x)";
            std::int64_t value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (error != std::errc() || end != text.data() + text.size() || value < min || value > max)
                return "'" + text + "' is out of range " + range;
            return {};
        },
        "INT in " + range);
}

CLI::Validator duration_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            try {
                parse_duration(text);
                return {};
            } catch (const UsageError& e) {
                return e.what();
            }
        },
        "DURATION");
}

std::string url_problem(const std::string& url) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) return "it must start with http:// or https://";
    for (const char ch : url) {
        const auto byte = static_cast<unsigned char>(ch);
        if (byte <= 0x20 || byte >= 0x7f)
            return "it may hold only printable ASCII without spaces (percent-encode the rest, e.g. %20)";
    }
    const std::string rest = url.substr(url.find("://") + 3);
    if (rest.empty() || rest[0] == '/' || rest[0] == '?' || rest[0] == '#') return "it has no host";
    return {};
}

std::string naming_the_flag(const std::vector<CarriedBy>& flags, const std::string& message) {
    for (const auto& carried : flags)
        if (message.rfind(carried.refusal, 0) == 0) return std::string(carried.flag) + ": " + message;
    return message;
}

}  // namespace tributary::cli
