// The iotail subcommands. Each takes the arguments after its name (argv[0] is the subcommand
// name), writes to the given streams, and returns the process exit status. Errors are thrown
// (UsageError, LogFormatError, std::system_error) and mapped to exit codes by main.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

namespace iotail::cli {

using CommandArgs = std::span<char* const>;

// Exit status of `iotail run` and `iotail pctiles` when an SLA target was violated (1: system
// error, 2: bad input).
inline constexpr int kExitSlaViolated = 3;

int PctilesCommand(CommandArgs args, std::ostream& out, std::ostream& err);
int MergeCommand(CommandArgs args, std::ostream& out, std::ostream& err);
int PlotCommand(CommandArgs args, std::ostream& out, std::ostream& err);
int RunCommand(CommandArgs args, std::ostream& out, std::ostream& err);
int SweepCommand(CommandArgs args, std::ostream& out, std::ostream& err);
int CompareCommand(CommandArgs args, std::ostream& out, std::ostream& err);
// `iotail pctiles --compat fio-histo-log-pctiles ARGS`: args[0] is "pctiles", then ARGS.
int PctilesCompatCommand(CommandArgs args, std::ostream& out, std::ostream& err);
// `iotail completion bash|zsh`: the shell's completion script (cli/completion.cc).
int CompletionCommand(CommandArgs args, std::ostream& out, std::ostream& err);

// Each command's documentation, from the tables that parse its options (cli/command_doc.h).
struct CommandDoc;
CommandDoc RunDoc();
CommandDoc SweepDoc();
CommandDoc PctilesDoc();
CommandDoc MergeDoc();
CommandDoc CompareDoc();
CommandDoc PlotDoc();
CommandDoc CompletionDoc();

struct CommandInfo {
  std::string_view name;
  std::string_view summary;
  int (*run)(CommandArgs, std::ostream&, std::ostream&);
  CommandDoc (*doc)();
};

// All subcommands, in the order `iotail --help` lists them.
std::span<const CommandInfo> Commands();

}  // namespace iotail::cli
