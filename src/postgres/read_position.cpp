#include "read_position.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace tributary::postgres {

namespace {

bool all_digits(const std::string& text) {
    return !text.empty() && text.size() <= 19 &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string one_text(const LogPosition& position) { return position.tx_id + ":" + std::to_string(position.seq); }

LogPosition parse_one(const std::string& text, const char* refusal) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || !all_digits(text.substr(0, colon)) || !all_digits(text.substr(colon + 1)))
        throw std::invalid_argument(refusal);
    return LogPosition{text.substr(0, colon), std::stoll(text.substr(colon + 1))};
}

}  // namespace

std::string position_text(const ReadPosition& position) {
    if (!position.by_lane()) return one_text(position.log);
    std::string text;
    for (const auto& lane : position.lanes) {
        if (!text.empty()) text += ',';
        text += one_text(lane);
    }
    return text;
}

ReadPosition parse_position_text(const std::string& text) {
    if (text.find(',') == std::string::npos)
        return ReadPosition{parse_one(text, "Last-Event-ID must be an event id <tx>:<seq>"), {}};
    ReadPosition position;
    std::size_t start = 0;
    for (;;) {
        const auto comma = text.find(',', start);
        position.lanes.push_back(parse_one(text.substr(start, comma == std::string::npos ? comma : comma - start),
                                           "Last-Event-ID must be an event id: on Citus <tx>:<seq> per lane, "
                                           "separated by commas"));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return position;
}

std::string lane_tx_array(const ReadPosition& position) {
    std::string text = "{";
    for (const auto& lane : position.lanes) text += (text.size() > 1 ? "," : "") + lane.tx_id;
    return text + "}";
}

std::string lane_seq_array(const ReadPosition& position) {
    std::string text = "{";
    for (const auto& lane : position.lanes) text += (text.size() > 1 ? "," : "") + std::to_string(lane.seq);
    return text + "}";
}

}  // namespace tributary::postgres
