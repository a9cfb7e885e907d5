#pragma once

#include <string>

#include "core/source.h"

namespace tributary::postgres {

/// How a source is read, paged and authenticated, as `tributary.sources.
/// reading` holds it: a JSON object whose members are named after `source
/// add`'s flags, with only what differs from tributary's own protocol ("{}"
/// for a source that speaks it). Credentials appear as the names of the
/// environment variables that hold them, never as values.
std::string reading_json(const RecordLayout& layout, const Paging& paging, const EnvAuth& auth);

/// Fills `source`'s layout, paging and endpoint.auth from reading_json()'s
/// text. Throws std::runtime_error naming the member when the text is not
/// what reading_json() writes (a catalogue edited by hand).
void read_reading_json(const std::string& text, Source& source);

}  // namespace tributary::postgres
