#pragma once

// How each source of the run is read: the paging style (issue 13), the
// source server's route for it and the `source add` flags that read it.
// The healthy sources take the styles in turn, so that every run mixes them;
// the hostile-capable ones stay after-id, whose route the hostile modes shape.

#include <string>
#include <vector>

namespace tributary::crash {

struct SourceStyle {
    /// "after-id", or the style's name as `--paginate` and `/_truth/NAME?style=` spell it.
    std::string name;
    /// The route on the source server, with NAME where the source's name goes.
    std::string route;
    /// `source add` flags after `--url`.
    std::vector<std::string> flags;

    /// Keyed by text (tributary.events.event_key, a cursor that is a position),
    /// rather than by an integer id that only grows.
    bool keyed() const { return name != "after-id"; }
    /// The route of the source `source_name`.
    std::string path(const std::string& source_name) const;
};

/// Today's protocol: `?after_id=&limit=`, the id as key, the cursor the last id.
const SourceStyle& after_id_style();

/// The style of the healthy source number `index`: after-id, after-key, cursor,
/// link, time, page, offset, then again from the start.
const SourceStyle& healthy_style(int index);

}  // namespace tributary::crash
