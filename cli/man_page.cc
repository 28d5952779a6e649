// The man pages (roff, man(7)) of iotail and its commands, rendered from their CommandDocs, and
// the parts of each page that are not about options: examples, exit status, files.
#include <fmt/format.h>

#include "cli/build_info.h"
#include "cli/command_doc.h"

namespace iotail::cli {

namespace {

// `text` for roff: backslashes and dashes escaped, characters past ASCII as \[uXXXX], and a
// control character ('.', '\'') at the start of a line made text.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '|') {
      out += "|\\:";  // a line may break after it
    } else if (c >= 0x80) {
      // A UTF-8 sequence: its code point.
      const int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
      uint32_t cp = c & (0x3f >> extra);
      for (int k = 0; k < extra && i + 1 < text.size(); ++k) {
        cp = (cp << 6) | (static_cast<unsigned char>(text[++i]) & 0x3f);
      }
      out += fmt::format("\\[u{:04X}]", cp);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Paragraphs separated by blank lines, each after .PP.
std::string Paragraphs(std::string_view text) {
  std::string out;
  bool open = false;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, nl - start);
    if (line.empty()) {
      open = false;
    } else {
      if (!open) out += ".PP\n";
      open = true;
      // A line that starts with spaces keeps its own line (a list in the text).
      if (line.starts_with(" ")) out += ".br\n";
      out += Roff(line.substr(line.find_first_not_of(' '))) + "\n";
    }
    start = nl + 1;
  }
  return out;
}

// A synopsis line: the command words bold, the rest as written.
std::string SynopsisLine(std::string_view line) {
  size_t end = 0;
  while (end < line.size()) {
    const size_t space = std::min(line.find(' ', end), line.size());
    const std::string_view word = line.substr(end, space - end);
    if (word.empty() || word[0] == '[' || word[0] == '-' || (word[0] >= 'A' && word[0] <= 'Z')) {
      break;
    }
    end = space + 1;
  }
  end = std::min(end, line.size());
  const std::string_view bold = line.substr(0, end);
  return fmt::format("\\fB{}\\fR{}\n", Roff(bold), Roff(line.substr(end)));
}

std::string OptionTag(const OptionDoc& o) {
  std::string tag;
  for (size_t i = 0; i < o.names.size(); ++i) {
    tag += fmt::format("{}\\fB{}\\fR", i ? ", " : "", Roff(o.names[i]));
    if (i == 0 && !o.value.empty()) {
      tag += fmt::format("{}=\\fI{}\\fR{}", o.value_optional ? "[" : "", Roff(o.value),
                         o.value_optional ? "]" : "");
    }
  }
  return tag;
}

constexpr const char* kCommonExit =
    "0: success.\n\n1: a system error, or I/O errors counted in a run.\n\n"
    "2: bad input: options, job files or damaged logs.\n\n"
    "3: an --sla target was violated (run, pctiles).\n\n"
    "130 or 143: a run interrupted by SIGINT or SIGTERM (its summary and logs still complete).";

}  // namespace

std::string ManPage(const CommandDoc& doc, const ManExtras& extras) {
  std::string upper = doc.page;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = fmt::format(
      ".\\\" Generated from iotail's option tables (cli/command_doc.h): do not edit.\n"
      ".TH {} 1 \"\" \"iotail {}\" \"iotail manual\"\n.ad l\n.nh\n.SH NAME\n{} \\- {}\n.SH "
      "SYNOPSIS\n.nf\n",
      Roff(upper), GetBuildInfo().version, Roff(doc.page), Roff(doc.summary));
  for (const std::string& line : doc.synopsis) out += SynopsisLine(line);
  out += ".fi\n.SH DESCRIPTION\n" + Paragraphs(doc.description);
  out += ".SH OPTIONS\n";
  for (const OptionSection& section : doc.sections) {
    if (!section.title.empty()) out += fmt::format(".SS \"{}\"\n", Roff(section.title));
    for (const OptionDoc& o : section.options) {
      out += fmt::format(".TP\n{}\n{}\n", OptionTag(o), Roff(o.help));
    }
  }
  if (!extras.examples.empty()) {
    out += ".SH EXAMPLES\n";
    for (const auto& [what, command] : extras.examples) {
      out += fmt::format(".PP\n{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n", Roff(what), Roff(command));
    }
  }
  out += ".SH \"EXIT STATUS\"\n" +
         Paragraphs(extras.exit_status.empty() ? kCommonExit : extras.exit_status);
  if (!extras.files.empty()) out += ".SH FILES\n" + Paragraphs(extras.files);
  out += ".SH \"SEE ALSO\"\n";
  std::string see;
  for (const char* page : {"iotail", "iotail-run", "iotail-sweep", "iotail-pctiles", "iotail-merge",
                           "iotail-plot", "iotail-mpi", "fio"}) {
    if (page == doc.page) continue;
    see += fmt::format("{}.BR {} (1)", see.empty() ? "" : ",\n", Roff(page));
  }
  return out + see + "\n";
}

ManExtras ExtrasFor(std::string_view page) {
  ManExtras e;
  if (page == "iotail") {
    e.examples = {
        {"The default benchmark, then the percentiles of its log:",
         "iotail run\niotail pctiles iotail_clat_hist.1.log"},
        {"Shell completion for the current bash session:", "source <(iotail completion bash)"}};
    e.files =
        "/usr/share/bash-completion/completions/iotail, "
        "/usr/share/zsh/vendor-completions/_iotail: the shell completions (also printed by "
        "iotail completion bash|zsh).";
  } else if (page == "iotail-run") {
    e.examples = {
        {"The default benchmark (3 s of 4k random reads on a temporary file):", "iotail run"},
        {"Random reads on a device for 30 s, with a histogram log every second:",
         "iotail run --filename=/dev/nvme0n1 --ioengine=io_uring --rw=randread --bs=4k \\\n"
         "  --direct=1 --iodepth=32 --runtime=30s --time_based --write_hist_log=nvme \\\n"
         "  --log_hist_msec=1000 --output-format=json --output=nvme.json"},
        {"A fio job file:", "iotail run job.fio"}};
    e.files =
        "PREFIX_clat_hist.N.log (and PREFIX_lat_hist.N.log when rate-limited): fio-format "
        "histogram logs written with --write_hist_log=PREFIX, one per worker.";
  } else if (page == "iotail-sweep") {
    e.examples = {{"The capacity of an nbd export at a p99 of 10 ms, in JSON:",
                   "iotail sweep --uri=nbd://server/export --rw=randread --iodepth=16 \\\n"
                   "  --sla 'p99<=10ms' --step_time=4s --output-format=json"}};
    e.exit_status =
        "0 with a capacity; 3 when no rate meets the SLA; 2 on bad options; 1 when a step counted "
        "I/O errors or a log could not be written; 128 + signal when stopped (every finished step "
        "is still reported).";
  } else if (page == "iotail-pctiles") {
    e.examples = {{"Percentiles per second of two logs merged, with an SLA gate:",
                   "iotail pctiles a_clat_hist.*.log --percentiles 50 99 99.9 \\\n"
                   "  --time-quantum 1s --sla 'read:p99<=2ms'"}};
  } else if (page == "iotail-merge") {
    e.examples = {{"Merge the logs of several hosts into one on 500 ms quanta:",
                   "iotail merge -o all.log --time-quantum 500ms host*_clat_hist.*.log"}};
  } else if (page == "iotail-plot") {
    e.examples = {{"One HTML report with a p99 target drawn:",
                   "iotail plot h_clat_hist.*.log -o report.html --sla 'read:p99<=1ms'"}};
  } else if (page == "iotail-mpi") {
    e.examples = {{"One benchmark over four ranks, the cluster's log and JSON summary on rank 0:",
                   "mpirun -np 4 --hostfile hosts iotail-mpi run --filename=/dev/nvme0n1 \\\n"
                   "  --rw=randread --rate_iops=20000 --runtime=60 --time_based \\\n"
                   "  --write_hist_log=P --log_hist_msec=500 --log_per_rank --output-format=json"}};
  }
  return e;
}

}  // namespace iotail::cli
