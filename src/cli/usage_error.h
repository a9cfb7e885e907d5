#pragma once

#include <stdexcept>

namespace tributary::cli {

/// A bad flag or value: the message says what is wrong; exit code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace tributary::cli
