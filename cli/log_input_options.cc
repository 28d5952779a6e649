#include "cli/log_input_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "cli/command_doc.h"
#include "stats/core/errors.h"

namespace po = boost::program_options;

namespace iotail::cli {

void LogInputOptions::AddTo(po::options_description& description) {
  description.add_options()("time-quantum", po::value(&time_quantum)->default_value(time_quantum),
                            "interval length: 500ms, 2s, or bare seconds; any whole number of ms")(
      "log-hist-msec", po::value(&log_hist_msec),
      "log period in ms of Unix-epoch logs, to place their first interval (else inferred)")(
      "fio-client-logs", po::bool_switch(&fio_client_logs),
      "undo the alternating sums that 'fio --client' writes into its histogram logs")(
      "threads", po::value(&threads)->default_value(0),
      "parser threads (0: one per 16 MiB of input, at most one per core)");
}

std::optional<po::variables_map> LogInputOptions::Parse(CommandArgs args,
                                                        po::options_description& description,
                                                        std::ostream& out) {
  AddTo(description);
  return ParseWithInputs(args, description, files, out);
}

std::optional<po::variables_map> ParseWithInputs(CommandArgs args,
                                                 const po::options_description& description,
                                                 std::vector<std::string>& inputs,
                                                 std::ostream& out) {
  po::options_description hidden;
  hidden.add_options()("input", po::value(&inputs)->multitoken());
  po::options_description visible_and_hidden;
  visible_and_hidden.add(description).add(hidden);
  po::positional_options_description positional;
  positional.add("input", -1);
  const SplitArgs split = SplitAtDashes(args);
  if (split.WantsManPage()) {
    out << ManPage(ProgramOptionsDoc(args[0], description));
    return std::nullopt;
  }
  po::variables_map vm;
  po::store(po::command_line_parser(split.options)
                .options(visible_and_hidden)
                .positional(positional)
                .run(),
            vm);
  po::notify(vm);
  inputs.insert(inputs.end(), split.after_dashes.begin(), split.after_dashes.end());
  if (vm.count("help")) {
    out << description << '\n';
    return std::nullopt;
  }
  return vm;
}

void PrintMergerWarnings(const stats::Merger& merger, std::string_view command, std::ostream& err) {
  for (const auto& w : merger.warnings()) err << "iotail " << command << ": warning: " << w << '\n';
}

int64_t ParseQuantumMs(std::string_view text, std::string_view option) {
  std::string_view number = text;
  double scale = 1000;  // bare numbers are seconds
  if (number.ends_with("ms")) {
    number.remove_suffix(2);
    scale = 1;
  } else if (number.ends_with("s")) {
    number.remove_suffix(1);
  }
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double ms = value * scale;
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size() ||
      !std::isfinite(ms) || ms < 1 || ms != std::floor(ms) || ms > 1e15) {
    throw stats::UsageError(fmt::format(
        "{}: expected a positive whole number of milliseconds such as 500ms, 2s or 1.5, got '{}'",
        option, text));
  }
  return static_cast<int64_t>(ms);
}

namespace {

// fio --client names a host's logs NAME.log.HOST (the server's address appended).
bool NamedLikeClientLog(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const size_t at = name.rfind(".log.");
  if (at == std::string::npos || at + 5 >= name.size()) return false;
  // NAME.log.gz is a compressed log, not a host's.
  const std::string_view suffix = std::string_view(name).substr(at + 5);
  for (std::string_view compressed : {"gz", "xz", "zst", "bz2", "lz4", "zip"}) {
    if (suffix == compressed) return false;
  }
  return true;
}

}  // namespace

std::string LogKindOf(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const size_t hist = name.rfind("_hist.");
  if (hist == std::string::npos) return "";
  const size_t explain = name.rfind("_explain_", hist);
  if (explain != std::string::npos) return name.substr(explain + 1, hist - explain - 1);
  if (hist >= 5 && name.compare(hist - 5, 5, "_clat") == 0) return "clat";
  if (hist >= 4 && name.compare(hist - 4, 4, "_lat") == 0) return "lat";
  return "";
}

stats::MergeOptions LogInputOptions::ToMergeOptions(std::ostream& err,
                                                    std::string_view command) const {
  stats::MergeOptions options;
  options.quantum_ms = ParseQuantumMs(time_quantum, "--time-quantum");
  if (log_hist_msec < 0) throw stats::UsageError("--log-hist-msec: must be positive");
  if (log_hist_msec > 0) options.log_hist_msec = log_hist_msec;
  options.undo_client_sums = fio_client_logs;
  options.threads = threads;
  if (files.empty()) throw stats::UsageError("no input files given");
  for (const std::string& f : files) {
    if (f == "-") {
      throw stats::UsageError(
          "'-': standard input is not read (histogram logs are read twice: a scan, then the "
          "merge); save it to a file and name that");
    }
  }
  // iotail writes each I/O's clat, its lat and (--explain) each stage into logs of their own
  // (PREFIX_clat_hist, PREFIX_lat_hist, PREFIX_explain_STAGE_hist): read together every I/O would
  // count twice and the quantities mix (a glob like P_*_hist.*.log takes them all). plot charts
  // the stages apart, so only clat with lat is refused there.
  std::string first_kind, first_file;
  for (const std::string& f : files) {
    const std::string kind = LogKindOf(f);
    if (kind.empty() || (command == "plot" && kind.starts_with("explain_"))) continue;
    if (first_kind.empty()) {
      first_kind = kind;
      first_file = f;
    } else if (kind != first_kind) {
      throw stats::UsageError(fmt::format(
          "'{}' ({}) and '{}' ({}) hold different measures of the same I/Os: read together every "
          "I/O counts twice; give one kind (e.g. PREFIX_clat_hist.*.log){}",
          first_file, first_kind, f, kind,
          (first_kind + kind).find("explain_") != std::string::npos
              ? "; iotail plot charts the explain stages beside the latency"
              : ""));
    }
  }
  // Logs of `fio --client` hold running sums: read as ordinary logs they inflate every count.
  size_t client = 0;
  for (const std::string& f : files) client += NamedLikeClientLog(f) ? 1 : 0;
  if (client != 0 && !fio_client_logs) {
    if (client != files.size()) {
      throw stats::UsageError(fmt::format(
          "{} of the {} inputs are named as fio --client writes its logs (NAME.log.HOST) and the "
          "others are not: merge them in separate calls, those with --fio-client-logs",
          client, files.size()));
    }
    err << fmt::format(
        "iotail {}: note: the inputs are named as fio --client writes its logs (NAME.log.HOST); "
        "undoing their running sums as --fio-client-logs does\n",
        command);
    options.undo_client_sums = true;
  }
  return options;
}

SplitArgs SplitAtDashes(CommandArgs args) {
  SplitArgs split;
  bool after = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string arg = args[i];
    if (!after && arg == "--") {
      after = true;
      continue;
    }
    if (!after && arg.starts_with("--")) {
      // fio's spelling: underscores in option names are dashes (--log_hist_msec).
      std::string name = arg.substr(0, arg.find('='));
      std::replace(name.begin(), name.end(), '_', '-');
      split.options.push_back(name + arg.substr(name.size()));
      continue;
    }
    (after ? split.after_dashes : split.options).push_back(arg);
  }
  return split;
}

}  // namespace iotail::cli
