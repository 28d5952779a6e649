// The options of `iotail sweep` that are its own (the search: --step_time, --ramp_time,
// --resolution, --start_rate, --min_rate, --max_rate, --retries): rows of the option table
// (cli/option_table.h) of scope run, passed to ParseRunPlan as the driver's (ParseContext::driver);
// their setters store into RunOptions::driver.sweep (cli/driver_options.h). The workload and the
// target are iotail run's options, --sla among them. SweepOrderCheck checks what the rows cannot
// alone. The usage and the iotail-sweep(1) page come from these rows and run's. Immutable,
// thread-safe to read.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cli/command_doc.h"
#include "cli/option_table.h"

namespace iotail::cli {

// The sweep's own rows, as one group (looked up before iotail run's).
std::span<const OptionGroup> SweepOptionGroups();
// --min_rate <= --start_rate <= --max_rate, else UsageError naming them.
void SweepOrderCheck(const SweepSettings& s);
// `iotail sweep --help`: the usage, what it does, its own options.
std::string SweepUsage();

}  // namespace iotail::cli
