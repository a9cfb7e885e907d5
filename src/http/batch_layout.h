#pragma once

#include <cstdint>
#include <string_view>

namespace tributary {

/// The members of a response that the loader reads. Everything else in a
/// response is validated as JSON and otherwise ignored.
///
/// Today the layout is fixed: an envelope object whose "events" member is
/// the list of records (or a bare list), "remaining" and "head_id" beside
/// it, and in each record "id" and "payload". This is the one place that
/// says so: a configurable layout (a record pointer such as /data, key and
/// payload pointers, a next-cursor pointer) plugs in here, and the single
/// pass over the body (scan_batch) stays as it is.
enum class BatchField : std::uint8_t { none, records, remaining, head_id, id, payload };

/// The field a member of the envelope is, by its (decoded) name.
constexpr BatchField envelope_field(std::string_view name) {
    if (name == "events") return BatchField::records;
    if (name == "remaining") return BatchField::remaining;
    if (name == "head_id") return BatchField::head_id;
    return BatchField::none;
}

/// The field a member of a record is, by its (decoded) name.
constexpr BatchField record_field(std::string_view name) {
    if (name == "id") return BatchField::id;
    if (name == "payload") return BatchField::payload;
    return BatchField::none;
}

/// The longest name above: a longer member name is none of them.
constexpr std::size_t kLongestFieldName = 9;

/// How messages name a field.
constexpr const char* field_name(BatchField field) {
    switch (field) {
        case BatchField::records: return "events";
        case BatchField::remaining: return "remaining";
        case BatchField::head_id: return "head_id";
        case BatchField::id: return "id";
        case BatchField::payload: return "payload";
        case BatchField::none: break;
    }
    return "";
}

}  // namespace tributary
