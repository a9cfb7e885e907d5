#include "maintenance/maintenance_step.h"

namespace tributary::maintenance {

// Out of line so that the vtable lives in one object file.
MaintenanceStep::~MaintenanceStep() = default;

}  // namespace tributary::maintenance
