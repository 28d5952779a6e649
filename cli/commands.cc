#include "cli/commands.h"

#include <array>

namespace iotail::cli {

std::span<const CommandInfo> Commands() {
  static constexpr std::array<CommandInfo, 6> kCommands{{
      {"run", "drive I/O at a file or block device and write fio-format histogram logs",
       &RunCommand},
      {"sweep", "find the highest rate at which latency SLA targets hold (capacity at an SLA)",
       &SweepCommand},
      {"pctiles", "per-interval latency percentiles and SLC factors from histogram logs",
       &PctilesCommand},
      {"merge", "align and merge histogram logs into one fio-format histogram log", &MergeCommand},
      {"compare", "compare two runs' latency percentiles: B - A with confidence, a verdict",
       &CompareCommand},
      {"plot", "charts of histogram logs: one self-contained HTML report or SVG files",
       &PlotCommand},
  }};
  return kCommands;
}

}  // namespace iotail::cli
