#pragma once

#include <string>

namespace tributary {

/// The project's version, from CMakeLists.txt: "0.17.0".
const char* version_number();

/// The commit the binary was built from: 12 hex digits, "-dirty" appended
/// when tracked files differed from it; "unknown" when not built from a git
/// checkout (a source tarball).
const char* version_commit();

/// What `tributary --version` says after the program's name:
/// "0.17.0 (commit 0123456789ab)".
std::string version_text();

}  // namespace tributary
