#include "cli/command_doc.h"

#include <fmt/format.h>

#include <boost/program_options/value_semantic.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/run_options.h"

namespace po = boost::program_options;

namespace iotail::cli {

namespace {

// Lines of `text`, without their '\n'.
std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    lines.emplace_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? "" : text.substr(nl + 1);
  }
  return lines;
}

std::string OneLine(std::string text) {
  for (char& c : text) c = c == '\n' ? ' ' : c;
  return text;
}

OptionDoc RunOptionDoc(const OptionDef& d) {
  OptionDoc o;
  o.names.push_back(fmt::format("--{}", d.name));
  for (const char* alias : d.aliases) o.names.push_back(fmt::format("--{}", alias));
  o.value = OptionValueLabel(d);
  o.value_optional = TakesBareValue(d);
  if (o.value_optional && !o.value.empty() && o.value[0] == '[') {
    o.value = o.value.substr(2, o.value.size() - 3);  // "[=a|b]" -> "a|b"
  }
  o.words = OptionValueWords(d);
  if (o.value == "V" && !o.words.empty()) {  // a text row whose help starts with its words
    o.value.clear();
    for (const std::string& w : o.words) o.value += (o.value.empty() ? "" : "|") + w;
  }
  o.help = d.help;
  if (*d.default_value != '\0') o.help += fmt::format(" (default {})", d.default_value);
  if (d.scope == OptionScope::kRun) o.help += " [the whole run; command line only]";
  return o;
}

}  // namespace

CommandDoc RunDoc() {
  CommandDoc doc;
  doc.page = "iotail-run";
  doc.summary = std::string(Commands()[0].summary);
  doc.synopsis = {"iotail run [options] [JOBFILE.fio...]"};
  doc.description = RunDescription();
  for (const OptionGroup& group : AllOptionTables()) {
    OptionSection section{group.title, {}};
    for (const OptionDef& d : group.rows) section.options.push_back(RunOptionDoc(d));
    doc.sections.push_back(std::move(section));
  }
  return doc;
}

CommandDoc DriverDoc(CommandDoc head, std::span<const OptionGroup> own) {
  const CommandDoc run = RunDoc();
  for (const OptionGroup& group : own) {
    OptionSection section{group.title, {}};
    for (const OptionDef& d : group.rows) section.options.push_back(RunOptionDoc(d));
    head.sections.push_back(std::move(section));
  }
  for (OptionSection section : run.sections) {
    section.title = "iotail run: " + section.title;
    head.sections.push_back(std::move(section));
  }
  return head;
}

CommandDoc ProgramOptionsDoc(std::string_view command, const po::options_description& description) {
  CommandDoc doc;
  doc.page = fmt::format("iotail-{}", command);
  for (const CommandInfo& c : Commands()) {
    if (c.name == command) doc.summary = std::string(c.summary);
  }
  // The caption: "usage: A\n       B\n\nText...\n\noptions".
  bool in_usage = true;
  // Boost has no getter for the caption: it is what the printed description shows before its
  // options ("CAPTION:\n  -h [ --help ] ...").
  std::ostringstream printed;
  printed << description;
  std::string caption = printed.str();
  caption.resize(std::min(caption.find(":\n"), caption.size()));
  for (const std::string& line : Lines(caption)) {
    if (in_usage && line.starts_with("usage: ")) {
      doc.synopsis.push_back(line.substr(7));
    } else if (in_usage && line.starts_with("       ")) {
      doc.synopsis.push_back(line.substr(7));
    } else if (line != "options") {
      in_usage = false;
      doc.description += line + "\n";
    }
  }
  while (doc.description.starts_with("\n")) doc.description.erase(0, 1);
  while (doc.description.ends_with("\n\n")) doc.description.pop_back();
  OptionSection section;
  for (const auto& option : description.options()) {
    OptionDoc o;
    o.names.push_back("--" + option->long_name());
    const std::string shown = option->format_name();  // "-o [ --output ]" or "--output"
    if (shown.starts_with("-") && !shown.starts_with("--")) {
      o.names.push_back(shown.substr(0, shown.find(' ')));
    }
    const auto& semantic = option->semantic();
    if (semantic->max_tokens() > 0) {
      o.value = semantic->max_tokens() > 1 ? "VALUE..." : "VALUE";
    }
    o.help = OneLine(option->description());
    const std::string parameter = option->format_parameter();  // "arg (=1s)"
    if (const size_t at = parameter.find("(="); at != std::string::npos && !o.value.empty()) {
      o.help += fmt::format(" (default {})", parameter.substr(at + 2, parameter.size() - at - 3));
    }
    section.options.push_back(std::move(o));
  }
  doc.sections.push_back(std::move(section));
  return doc;
}

CommandDoc IotailDoc() {
  CommandDoc doc;
  doc.page = "iotail";
  doc.summary = "storage load generator and latency-analysis toolkit";
  doc.synopsis = {"iotail COMMAND [options]", "iotail --version", "iotail --help"};
  doc.description =
      "A storage load generator and latency-analysis toolkit in one binary. iotail drives I/O "
      "through io_uring, libaio, posixaio or fio's synchronous engines, records every completion "
      "latency into lock-free per-thread histograms with exactly fio's bucket layout, writes "
      "fio-format histogram logs on an epoch-aligned cadence, and reads, aligns, merges and "
      "summarises such logs (fio's or its own): per-interval percentiles by fio's rule, SLC "
      "factors, SLA checks.\n\n"
      "Options take fio's names and spellings. Each command has a page of its own, listed "
      "under SEE ALSO.";
  OptionSection commands{"Commands", {}};
  for (const CommandInfo& c : Commands()) {
    commands.options.push_back({{std::string(c.name)}, "", false, {}, std::string(c.summary)});
  }
  doc.sections.push_back(std::move(commands));
  doc.sections.push_back(
      {"Options",
       {{{"--help", "-h"}, "man", true, {"man"}, "the commands (man: this page, as roff)"},
        {{"--version"},
         "",
         false,
         {},
         "the version, the git commit, the compiler, the libraries"}}});
  doc.operands = "";
  return doc;
}

std::vector<CommandDoc> SubcommandDocs() {
  std::vector<CommandDoc> docs;
  for (const CommandInfo& c : Commands()) {
    if (c.doc != nullptr) docs.push_back(c.doc());
  }
  return docs;
}

}  // namespace iotail::cli
