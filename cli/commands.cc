#include "cli/commands.h"

#include <array>

#include "cli/command_doc.h"

namespace iotail::cli {

std::span<const CommandInfo> Commands() {
  static constexpr std::array<CommandInfo, 7> kCommands{{
      {"run", "drive I/O at a file or block device and write fio-format histogram logs",
       &RunCommand, &RunDoc},
      {"sweep", "find the highest rate at which latency SLA targets hold (capacity at an SLA)",
       &SweepCommand, &SweepDoc},
      {"pctiles", "per-interval latency percentiles and SLC factors from histogram logs",
       &PctilesCommand, &PctilesDoc},
      {"merge", "align and merge histogram logs into one fio-format histogram log", &MergeCommand,
       &MergeDoc},
      {"compare", "compare two runs' latency percentiles: B - A with confidence, a verdict",
       &CompareCommand, &CompareDoc},
      {"plot", "charts of histogram logs: one self-contained HTML report or SVG files",
       &PlotCommand, &PlotDoc},
      {"completion", "print the bash or zsh completion script", &CompletionCommand, &CompletionDoc},
  }};
  return kCommands;
}

}  // namespace iotail::cli
