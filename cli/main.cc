// iotail: storage load generator and latency-analysis toolkit. Dispatches to a subcommand and
// maps errors to exit codes: 2 for bad input (options, damaged logs), 1 for system failures.
#include <fmt/format.h>
#include <signal.h>

#include <boost/program_options/errors.hpp>
#include <cstring>
#include <iostream>
#include <system_error>

#include "cli/build_info.h"
#include "cli/command_doc.h"
#include "cli/commands.h"
#include "stats/core/errors.h"
#include "stats/util/output_file.h"

namespace {

void PrintUsage(std::ostream& out) {
  out << "usage: iotail <command> [options]\n\ncommands:\n";
  for (const auto& command : iotail::cli::Commands()) {
    out << fmt::format("  {:<9} {}\n", command.name, command.summary);
  }
  out << "\nRun 'iotail <command> --help' for a command's options.\n";
}

// SIGINT or SIGTERM outside a run (iotail run handles them itself: it stops cleanly) ends the
// process as the signal would, but first removes the temporary files of outputs not yet committed
// (a merge -o interrupted halfway left a 182 MB OUT.tmp.PID behind).
extern "C" void RemoveTemporariesAndDie(int sig) {
  iotail::stats::RemoveOutputTemporaries();
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string_view name = argv[1];
  signal(SIGINT, RemoveTemporariesAndDie);
  signal(SIGTERM, RemoveTemporariesAndDie);
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  if (name == "--help=man") {
    std::cout << iotail::cli::ManPage(iotail::cli::IotailDoc());
    return 0;
  }
  if (name == "--version") {
    std::cout << iotail::cli::VersionText("iotail");
    return 0;
  }
  try {
    for (const auto& command : iotail::cli::Commands()) {
      if (command.name == name) {
        return command.run(iotail::cli::CommandArgs(argv + 1, argc - 1), std::cout, std::cerr);
      }
    }
    std::cerr << fmt::format("iotail: unknown command '{}'\n", name);
    PrintUsage(std::cerr);
    return 2;
  } catch (const iotail::stats::UsageError& e) {
    std::cerr << "iotail " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << "iotail " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const iotail::stats::LogFormatError& e) {
    std::cerr << "iotail " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const std::system_error& e) {
    std::cerr << "iotail " << name << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "iotail " << name << ": " << e.what() << "\n";
    return 1;
  }
}
