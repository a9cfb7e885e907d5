// SystemClock is header-only; this unit keeps the header compiled on its own.
#include "system_clock.h"
