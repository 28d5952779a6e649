// What a command's documentation is made of, gathered from the same tables that parse its
// options, so that `--help`, the man pages and the shell completions cannot drift apart:
// `iotail run`'s option table (cli/option_table.h) and the Boost.Program_options descriptions of
// pctiles, merge and plot. A CommandDoc is plain data; ManPage renders one as roff (man(7)), and
// BashCompletion/ZshCompletion render every command's as a completion script
// (`iotail completion bash|zsh`; the build installs their output and the pages).
// Pure functions of their arguments; thread-safe.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iotail::cli {

struct OptionDoc {
  std::vector<std::string> names;  // "--rw", then its aliases; "-o" forms after the long one
  std::string value;               // what the value looks like ("SIZE", "read|write"); "" flag
  bool value_optional = false;     // a bare --name is allowed too (flags, choices with "1")
  std::vector<std::string> words;  // the values to complete (choices); empty: a file or free text
  std::string help;                // one paragraph, defaults and aliases included
};

struct OptionSection {
  std::string title;  // "" for a command with one list
  std::vector<OptionDoc> options;
};

struct CommandDoc {
  std::string page;                   // "iotail-run": the man page and what completes
  std::string summary;                // the NAME line's text
  std::vector<std::string> synopsis;  // one line each, without the "usage: "
  std::string description;            // paragraphs separated by blank lines
  std::vector<OptionSection> sections;
  std::string operands = "FILE";  // what the words that are not options are (for completion)
};

// The man page's own parts beside the options: examples, exit status, files, see also.
struct ManExtras {
  std::vector<std::pair<std::string, std::string>> examples;  // (what it does, the command)
  std::string exit_status;                                    // paragraphs; "" for the common one
  std::string files;                                          // paragraphs; "" none
};

// The docs of `iotail run`, from the option table; of iotail-mpi (its own options, then those of
// iotail run).
CommandDoc RunDoc();
// The docs of a command that drives runs (sweep, iotail-mpi): `head` (page, summary, synopsis,
// description) with a section per group of its own rows, then every section of `iotail run`,
// titled "iotail run: ...".
struct OptionGroup;
CommandDoc DriverDoc(CommandDoc head, std::span<const OptionGroup> own);
// The docs of a Boost.Program_options command: its caption ("usage: ...\n\nText\n\noptions") and
// options; `command` is the subcommand's name.
CommandDoc ProgramOptionsDoc(std::string_view command,
                             const boost::program_options::options_description& description);
// iotail(1): the commands and the global options.
CommandDoc IotailDoc();
// Every command's doc (pctiles, merge, plot from their descriptions), in Commands() order.
std::vector<CommandDoc> SubcommandDocs();

// The page's roff text; extras by page name (ExtrasFor).
std::string ManPage(const CommandDoc& doc, const ManExtras& extras);
ManExtras ExtrasFor(std::string_view page);
inline std::string ManPage(const CommandDoc& doc) { return ManPage(doc, ExtrasFor(doc.page)); }

// Completion scripts for `iotail` (subcommands, their options, choice values, files).
std::string BashCompletion(std::span<const CommandDoc> commands);
std::string ZshCompletion(std::span<const CommandDoc> commands);

}  // namespace iotail::cli
