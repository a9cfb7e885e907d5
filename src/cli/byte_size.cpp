#include "byte_size.h"

#include <cctype>
#include <limits>
#include <map>

#include "usage_error.h"

namespace tributary::cli {

std::int64_t parse_byte_size(const std::string& text) {
    static const std::map<std::string, std::int64_t> units = {{"", 1},
                                                              {"B", 1},
                                                              {"KB", 1000},
                                                              {"MB", 1000 * 1000},
                                                              {"GB", 1000LL * 1000 * 1000},
                                                              {"TB", 1000LL * 1000 * 1000 * 1000},
                                                              {"KIB", 1024},
                                                              {"MIB", 1024 * 1024},
                                                              {"GIB", 1024LL * 1024 * 1024},
                                                              {"TIB", 1024LL * 1024 * 1024 * 1024}};
    std::size_t i = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit;
    for (std::size_t j = i; j < text.size(); ++j)
        if (text[j] != ' ') unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[j])));
    const auto found = units.find(unit);
    if (i == 0 || i > 15 || found == units.end())
        throw UsageError("invalid size '" + text + "': use a number with B, kB, MB, GB, TB, KiB, MiB, GiB or TiB");
    const std::int64_t number = std::stoll(text.substr(0, i));
    if (number == 0 || number > std::numeric_limits<std::int64_t>::max() / found->second)
        throw UsageError("invalid size '" + text + "': it must be positive and below 8 EiB");
    return number * found->second;
}

}  // namespace tributary::cli
