#include "logging.h"

#include <unistd.h>

#include <cctype>
#include <ctime>
#include <string_view>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace tributary::cli {

namespace {

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

/// 2026-11-22T07:06:32.676Z: what log shippers parse without configuration.
std::string iso8601_utc(spdlog::log_clock::time_point t) {
    const auto seconds = spdlog::log_clock::to_time_t(t);
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[40];
    const auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    return std::string(text, n) + fmt::format(".{:03}Z", millis);
}

bool is_key(std::string_view key) {
    if (key.empty()) return false;
    for (const char c : key)
        if (!std::islower(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

/// A record's message on one line: PostgreSQL's errors end with a newline
/// (libpq's texts), and a HINT or DETAIL adds lines of their own; a log
/// shipper, or a person reading the journal, must see one record per line.
std::string one_line(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\n' && text[i] != '\r') {
            out += text[i];
            continue;
        }
        while (i + 1 < text.size() && std::isspace(static_cast<unsigned char>(text[i + 1]))) ++i;
        out += ' ';
    }
    return out;
}

/// `%*` of the text format: the message, on one line.
class TextMessage : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const auto line = one_line(std::string_view(msg.payload.data(), msg.payload.size()));
        dest.append(line.data(), line.data() + line.size());
    }

    std::unique_ptr<spdlog::custom_flag_formatter> clone() const override { return std::make_unique<TextMessage>(); }
};

/// `%*`: the whole record as one JSON object. Our messages start with
/// key=value pairs ("source=orders.eu worker=w2 ..."): they become fields.
class JsonRecord : public spdlog::custom_flag_formatter {
public:
    explicit JsonRecord(std::string host) : host_(std::move(host)) {}

    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        nlohmann::json record;
        record["time"] = iso8601_utc(msg.time);
        record["level"] = std::string(spdlog::level::to_string_view(msg.level).data(),
                                      spdlog::level::to_string_view(msg.level).size());
        record["host"] = host_;
        record["pid"] = static_cast<long>(getpid());
        std::string_view text(msg.payload.data(), msg.payload.size());
        while (true) {
            const auto space = text.find(' ');
            const auto token = text.substr(0, space);
            const auto equals = token.find('=');
            if (equals == std::string_view::npos || !is_key(token.substr(0, equals))) break;
            record[std::string(token.substr(0, equals))] = std::string(token.substr(equals + 1));
            if (space == std::string_view::npos) {
                text = {};
                break;
            }
            text.remove_prefix(space + 1);
        }
        record["msg"] = one_line(text);
        // Messages quote what sources sent: never let a bad byte break a line.
        const auto line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        dest.append(line.data(), line.data() + line.size());
    }

    std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
        return std::make_unique<JsonRecord>(host_);
    }

private:
    std::string host_;
};

}  // namespace

void set_up_logging(const std::string& level, const std::string& format) {
    const std::string host = host_name();
    auto logger = spdlog::stderr_color_mt("tributary");
    if (format == "json") {
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<JsonRecord>('*', host).set_pattern("%*");
        logger->set_formatter(std::move(formatter));
    } else {
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<TextMessage>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ host=" + host + " pid=%P %*");
        logger->set_formatter(std::move(formatter));
    }
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace tributary::cli
