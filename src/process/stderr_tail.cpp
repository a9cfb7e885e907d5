#include "stderr_tail.h"

namespace tributary::process {

void StderrTail::append(const char* data, std::size_t size) {
    kept_.append(data, size);
    if (kept_.size() > limit_) {
        kept_.erase(0, kept_.size() - limit_);
        dropped_ = true;
    }
}

std::string StderrTail::text() const { return dropped_ ? "..." + kept_ : kept_; }

}  // namespace tributary::process
