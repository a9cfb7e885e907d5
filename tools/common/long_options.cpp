#include "long_options.h"

#include <algorithm>
#include <optional>

namespace tributary::tools {

std::string walk_long_options(int argc, const char* const* argv, const std::vector<std::string>& valued, bool& help,
                              bool& verbose, const OptionTaker& take) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return {};
        }
        if (arg == "--verbose" || arg == "-v") {
            verbose = true;
            continue;
        }
        if (arg.rfind("--", 0) != 0) return "unexpected argument '" + arg + "'";

        std::string name = arg;
        std::optional<std::string> value;
        if (auto eq = arg.find('='); eq != std::string::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
        }
        if (std::find(valued.begin(), valued.end(), name) == valued.end()) return "unknown option '" + name + "'";
        if (!value) {
            if (i + 1 >= argc) return "option " + name + " needs a value";
            value = argv[++i];
        }
        if (auto error = take(name, *value); !error.empty()) return error;
    }
    return {};
}

}  // namespace tributary::tools
