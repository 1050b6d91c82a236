// Compatibility include: the PLD family lives in core/accounting/pld/ (conventions.md §17). Code written
// before the move includes this path; new code includes "core/accounting/pld/pld.h" directly.
#pragma once

#include "core/accounting/pld/pld.h"
