// Compatibility include: the RDP family lives in core/accounting/rdp/ (conventions.md §17). Code written
// before the move includes this path; new code includes "core/accounting/rdp/rdp.h" directly.
#pragma once

#include "core/accounting/rdp/rdp.h"
