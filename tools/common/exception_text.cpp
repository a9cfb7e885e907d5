#include "exception_text.h"

#include <stdexcept>

namespace tributary::tools {

std::string exception_text(std::exception_ptr error) {
    try {
        if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
    }
    return "internal error";
}

}  // namespace tributary::tools
