#include "fetch_result.h"

namespace tributary {

const char* to_string(FetchResult::Status s) {
    switch (s) {
        case FetchResult::Status::ok: return "ok";
        case FetchResult::Status::transient: return "transient";
        case FetchResult::Status::throttled: return "throttled";
        case FetchResult::Status::failing: return "failing";
        case FetchResult::Status::stopped: return "stopped";
        case FetchResult::Status::late: return "late";
    }
    return "unknown";
}

}  // namespace tributary
