#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tributary {

/// The records of the whole list as an API counts them, from its
/// X-Total-Count header (json-server, many REST frameworks): the first
/// value, decimal digits within int64 around optional blanks. Nothing when
/// absent or anything else: the header is a hint checked against the page,
/// never a reason to fail on its own.
std::optional<std::int64_t> total_count(const std::vector<std::string>& values);

}  // namespace tributary
