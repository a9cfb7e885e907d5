#include "cursor_progress.h"

#include "cluster.h"

namespace tributary::crash {

std::map<std::string, long> cursor_progress(const Cluster& cluster) {
    std::map<std::string, long> out;
    for (const auto& row :
         cluster.query("SELECT s.name, CASE WHEN c.position IS NULL THEN c.last_event_id ELSE c.events_stored END"
                       "  FROM tributary.cursors c JOIN tributary.sources s ON s.id = c.source_id"))
        out[row.at(0)] = std::stol(row.at(1));
    return out;
}

}  // namespace tributary::crash
