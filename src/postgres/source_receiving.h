#pragma once

#include <string>

#include "webhook/pushed_source.h"

namespace tributary::postgres {

/// How a pushed source is authenticated and keyed, as `tributary.sources.
/// receiving` holds it (migration 0012): a JSON object named after `source
/// add --push`'s flags. The secret appears as the name of the environment
/// variable that holds it, never as a value.
std::string receiving_json(const webhook::PushedSource& source);

/// Fills `source`'s auth, key, key_header and max_body_bytes from
/// receiving_json()'s text. Throws std::runtime_error naming the member when
/// the text is not what receiving_json() writes (a catalogue edited by hand).
void read_receiving_json(const std::string& text, webhook::PushedSource& source);

}  // namespace tributary::postgres
