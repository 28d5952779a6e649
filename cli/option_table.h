// The option tables of `iotail run`: one entry per option name (fio's spelling, underscores),
// whether it is a bare boolean flag, its help line, and how it sets a RunOptions. The tables are
// split by concept across files (run_options.cc: I/O and outputs; run_options_jobs.cc: jobs,
// groups and fio's reporting switches; run_options_logs.cc: fio's bw/iops/lat logs); FindRunOption
// looks in all of them. Built once, immutable, thread-safe to read.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run_options.h"

namespace iotail::cli {

struct OptionDef {
  const char* name;
  bool boolean;
  const char* help;
  std::function<void(RunOptions&, const std::string&)> apply;
};

std::span<const OptionDef> CoreOptionTable();         // cli/run_options.cc
std::span<const OptionDef> JobControlOptionTable();   // cli/run_options_jobs.cc
std::span<const OptionDef> LogOptionTable();          // cli/run_options_logs.cc
std::span<const OptionDef> IoBehaviourOptionTable();  // cli/run_options_io.cc
// All of them, in the order --help lists them.
std::vector<std::span<const OptionDef>> AllOptionTables();

// The entry for `name` (underscores), or nullptr.
const OptionDef* FindRunOption(std::string_view name);
// Every option name, for suggestions and the help text.
std::vector<std::string_view> RunOptionNames();

}  // namespace iotail::cli
