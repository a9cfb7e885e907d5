#pragma once

// How far each source is loaded, in events, from the cursors: what the drain
// waits on and the monitor samples. A source keyed by id has loaded up to its
// last id (ids are 1..produced); a keyed source's cursor is a position (a
// key, a token, a URL, a watermark, a page), so its count of stored events
// says how far it is.

#include <map>
#include <string>

namespace tributary::crash {

class Cluster;

/// Events loaded per source name; throws when the database cannot be read.
std::map<std::string, long> cursor_progress(const Cluster& cluster);

}  // namespace tributary::crash
