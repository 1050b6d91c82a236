// Compatibility include: the GDP family lives in core/accounting/gdp/ (conventions.md §17). Code written
// before the move includes this path; new code includes "core/accounting/gdp/gdp.h" directly.
#pragma once

#include "core/accounting/gdp/gdp.h"
