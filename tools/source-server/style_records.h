#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "event_generator.h"

namespace tributary::source_server {

// How the first record of a page is damaged (fault modes no-key and key-bool).
enum class KeyDamage { none, missing, boolean };

// "evt-0000000042": the generic styles' key of event 42.
std::string style_key(std::int64_t id);
// The id of a key made by style_key(); empty for anything else.
std::optional<std::int64_t> parse_style_key(std::string_view key);

// The generic style routes' record:
//   {"key":"evt-0000000042","id":42,"updated_at":"2026-11-24T08:30:00.042Z","payload":{...}}
void append_style_record(std::string& out, const EventGenerator& generator, const SourceIdentity& source,
                         const EventRef& event, KeyDamage damage = KeyDamage::none);
// "[record,record,...]", the first record damaged as asked.
std::string style_records_array(const EventGenerator& generator, const SourceIdentity& source,
                                const std::vector<EventRef>& events, KeyDamage first_damage = KeyDamage::none);

}  // namespace tributary::source_server
