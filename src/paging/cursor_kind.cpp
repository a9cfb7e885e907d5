#include "cursor_kind.h"

namespace tributary {

std::optional<std::string> wrong_cursor_kind(const Cursor& at, PagingStyle style) {
    const bool wants_id = style == PagingStyle::after_id;
    if (at.is_id() == wants_id) return std::nullopt;
    const std::string name = to_string(style);
    if (wants_id) return "--paginate " + name + " needs an event-id cursor, the source holds a position";
    return "--paginate " + name + " needs a position cursor, the source holds the event id " + at.to_string();
}

}  // namespace tributary
