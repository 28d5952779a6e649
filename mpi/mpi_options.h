// iotail-mpi's own options, rows of the option table (cli/option_table.h) of scope run, passed to
// ParseRunPlan as the driver's (cli::ParseContext::driver): --log_per_rank and --setup_timeout,
// stored into RunOptions::driver.cluster (cli/driver_options.h). Every other option is iotail
// run's. Immutable, thread-safe to read.
#pragma once

#include <span>

#include "cli/option_table.h"

namespace iotail::mpi {

std::span<const cli::OptionGroup> MpiOptionGroups();

}  // namespace iotail::mpi
