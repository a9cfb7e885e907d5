#include "group_figures_document.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tributary::console {

namespace {

std::int64_t count(const nlohmann::json& group, const char* member) {
    const auto it = group.find(member);
    return it == group.end() || it->is_null() ? 0 : it->get<std::int64_t>();
}

double seconds(const nlohmann::json& group, const char* member) {
    const auto it = group.find(member);
    return it == group.end() || it->is_null() ? 0 : it->get<double>();
}

LaneFigures lane_figures(const nlohmann::json& row) {
    LaneFigures lane;
    lane.lane = row.at("lane").get<int>();
    lane.held = row.contains("holder") && !row["holder"].is_null();
    lane.events_behind = count(row, "events_behind");
    lane.events_behind_capped = row.value("events_behind_capped", false);
    lane.oldest_unprocessed_age_seconds = seconds(row, "oldest_unprocessed_age");
    return lane;
}

}  // namespace

std::vector<GroupFigures> group_figures(const std::string& groups_document) {
    const auto document = nlohmann::json::parse(groups_document, nullptr, false);
    if (document.is_discarded() || !document.is_object() || !document.contains("groups") ||
        !document["groups"].is_array())
        throw std::runtime_error("the groups document has no \"groups\" array");
    std::vector<GroupFigures> figures;
    try {
        for (const auto& group : document["groups"]) {
            GroupFigures f;
            f.name = group.at("name").get<std::string>();
            f.events_behind = count(group, "events_behind");
            f.events_behind_capped = group.value("events_behind_capped", false);
            f.oldest_unprocessed_age_seconds = seconds(group, "oldest_unprocessed_age");
            f.batches_in_flight = count(group, "batches_in_flight");
            f.retries_waiting = count(group, "retries_waiting");
            f.dead_letters = count(group, "dead_letters");
            f.lanes = static_cast<int>(group.value("lanes", std::int64_t{1}));
            f.unheld_lanes = static_cast<int>(count(group, "unheld_lanes"));
            if (const auto rows = group.find("lane_rows"); rows != group.end() && rows->is_array())
                for (const auto& row : *rows) f.lane_figures.push_back(lane_figures(row));
            figures.push_back(std::move(f));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("a group in the groups document is not as expected: ") + e.what());
    }
    return figures;
}

}  // namespace tributary::console
