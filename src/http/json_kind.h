#pragma once

namespace tributary {

/// The kinds of JSON value that the batch checks tell apart. Integer and
/// floating-point are separate kinds because an id must be an integer.
enum class JsonKind { null, boolean, integer, floating, string, array, object };

/// How messages name a kind: "top-level JSON is an object", "id is null".
constexpr const char* describe(JsonKind kind) {
    switch (kind) {
        case JsonKind::null: return "null";
        case JsonKind::boolean: return "a boolean";
        case JsonKind::integer: return "an integer";
        case JsonKind::floating: return "a floating-point number";
        case JsonKind::string: return "a string";
        case JsonKind::array: return "an array";
        case JsonKind::object: return "an object";
    }
    return "an unexpected value";
}

}  // namespace tributary
