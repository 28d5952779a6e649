// iotail pctiles: per-interval percentiles, min/max/mean and SLC factors from histogram logs.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <span>
#include <vector>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/log_input_options.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/report/pctiles_report.h"
#include "stats/util/large_buffer.h"
#include "stats/util/parallel_for.h"

namespace po = boost::program_options;

namespace iotail::cli {
namespace {

constexpr std::string_view kCompatPrefix = "--compat";

// Which rows to print: per direction and/or all selected directions combined ("all").
struct DirectionSelection {
  std::array<bool, stats::kDirectionCount> each{};
  bool combined = false;
};

DirectionSelection ParseDirections(std::string_view text, bool combine) {
  DirectionSelection selection;
  for (char c : text) {
    switch (c) {
      case 'r':
        selection.each[0] = true;
        break;
      case 'w':
        selection.each[1] = true;
        break;
      case 't':
        selection.each[2] = true;
        break;
      case 'm':
        selection.combined = true;
        break;
      default:
        throw stats::UsageError(fmt::format(
            "--directions: expected letters r (read), w (write), t (trim) and m (all combined), "
            "got '{}'",
            text));
    }
  }
  if (combine) {
    selection.combined = true;
    if (text == "rwt") selection.each = {};  // --combine alone: only the combined rows
  }
  if (!selection.combined && selection.each == std::array<bool, 3>{}) {
    throw stats::UsageError("--directions: select at least one direction");
  }
  return selection;
}

std::vector<double> SlcList(const std::vector<std::string>& args, std::string* name) {
  if (args.size() == 1 && args[0] == "sbk") {
    *name = "sbk";
    const auto l = stats::SbkSlcPercentiles();
    return {l.begin(), l.end()};
  }
  if (args.size() == 1 && args[0] == "paper") {
    *name = "paper";
    const auto l = stats::PaperSlcPercentiles();
    return {l.begin(), l.end()};
  }
  *name = "custom";
  auto list = stats::ParsePercentileList(args, "--slc-percentiles");
  if (list.size() < 2)
    throw stats::UsageError("--slc-percentiles: expected at least 2 percentiles");
  std::sort(list.begin(), list.end());
  return list;
}

// Moves the values of a multi-value option that are not its own, from the first such one on, to
// the front of `files` (in order).
template <typename IsOwn>
void GiveBackFiles(std::vector<std::string>& values, IsOwn is_own,
                   std::vector<std::string>& files) {
  auto first_foreign = std::find_if_not(values.begin(), values.end(), is_own);
  files.insert(files.begin(), first_foreign, values.end());
  values.erase(first_foreign, values.end());
}

// `--compat fio-histo-log-pctiles ARGS`: that script's drop-in; nullopt without --compat.
std::optional<int> RunCompat(CommandArgs args, std::ostream& out, std::ostream& err) {
  if (args.size() < 2 || !std::string_view(args[1]).starts_with(kCompatPrefix)) return std::nullopt;
  std::string_view arg = args[1];
  std::string_view name;
  size_t rest = 2;
  if (arg == kCompatPrefix && args.size() >= 3) {
    name = args[2];
    rest = 3;
  } else if (arg.starts_with("--compat=")) {
    name = arg.substr(9);
  }
  if (name != "fio-histo-log-pctiles") {
    throw stats::UsageError(
        fmt::format("--compat: expected 'fio-histo-log-pctiles', got '{}'", name));
  }
  std::vector<char*> compat_args{args[0]};
  compat_args.insert(compat_args.end(), args.begin() + static_cast<ptrdiff_t>(rest), args.end());
  return PctilesCompatCommand(compat_args, out, err);
}

// What a pctiles command line asks for.
struct PctilesSettings {
  LogInputOptions input;
  stats::ReportOptions options;
  DirectionSelection selection;
  std::vector<std::string> sla;
};

// pctiles's own words before they are checked (the settings' other fields are bound directly).
struct PctilesArgs {
  std::vector<std::string> percentile_args, slc_args;
  std::string unit = "us", method = "fio", directions = "rwt", format = "table";
  bool combine = false;
};

// pctiles's own options (LogInputOptions adds the inputs'), bound to `s` and `a`.
po::options_description PctilesDescription(PctilesSettings& s, PctilesArgs& a) {
  po::options_description description(
      "usage: iotail pctiles [options] FILES...\n"
      "       iotail pctiles --compat fio-histo-log-pctiles [that script's arguments]\n\n"
      "Reads fio-format histogram logs (fio 2 or 3, any coarseness, fio's or iotail's), aligns\n"
      "them on time quanta, merges them across files, and prints per-interval statistics and a\n"
      "whole-run line per direction. Option names take dashes or fio's underscores\n"
      "(--log_hist_msec = --log-hist-msec).\n\noptions");
  // clang-format off
  description.add_options()
      ("help,h", "show this help (--help=man: the iotail-pctiles(1) page)")
      ("percentiles", po::value(&a.percentile_args)->multitoken(),
       "percentiles to show: '50 99 99.9' or '50:99:99.9' (default: fio's list)")
      ("slc-percentiles", po::value(&a.slc_args)->multitoken(),
       "percentile list for SLC: sbk (default, 28 entries), paper (21 entries) or a list")
      ("method", po::value(&a.method)->default_value(a.method),
       "percentile rule: fio (fio's printed bucket values, exact) or interpolate")
      ("output-unit", po::value(&a.unit)->default_value(a.unit), "latency unit: ns, us or ms")
      ("directions", po::value(&a.directions)->default_value(a.directions),
       "letters: r read, w write, t trim, m all directions combined")
      ("combine", po::bool_switch(&a.combine), "print only the combined rows (dir 'all')")
      ("format", po::value(&a.format)->default_value(a.format), "table, csv or json")
      ("ci", po::value(&s.options.ci),
       "confidence level in percent (e.g. 95): print each percentile's confidence interval\n"
       "(order statistics over the counts, bucket edges included) as pN_lo and pN_hi")
      ("sla", po::value(&s.sla)->multitoken(),
       "latency targets checked on every interval: [read|write|trim|all:]p99<=2ms, mean<500us,\n"
       "max<1s (no direction: each direction); exit status 3 when any is violated");
  // clang-format on
  return description;
}

// The command line read into settings; nullopt when it asked for --help (printed to out).
std::optional<PctilesSettings> ParsePctiles(CommandArgs args, std::ostream& out) {
  PctilesSettings s;
  PctilesArgs a;
  std::vector<std::string>&percentile_args = a.percentile_args, &slc_args = a.slc_args;
  const std::string &unit = a.unit, &method = a.method, &directions = a.directions,
                    &format = a.format;
  const bool& combine = a.combine;
  po::options_description description = PctilesDescription(s, a);
  const std::optional<po::variables_map> vm = s.input.Parse(args, description, out);
  if (!vm) return std::nullopt;  // help
  // A multi-value option takes the words after it only while they are its own: the first one
  // that is not (a file name) ends it, so `--sla 'p99<=2ms' FILE` and `--percentiles 50 99 FILE`
  // read as typed. Percentile lists are digits and separators; SLC lists also a list name; SLA
  // targets always hold a comparison.
  auto is_list = [](const std::string& v) {
    return !v.empty() && v.find_first_not_of("0123456789.:,") == std::string::npos;
  };
  GiveBackFiles(percentile_args, is_list, s.input.files);
  GiveBackFiles(
      slc_args, [&](const std::string& v) { return v == "sbk" || v == "paper" || is_list(v); },
      s.input.files);
  GiveBackFiles(
      s.sla, [](const std::string& v) { return v.find('<') != std::string::npos; }, s.input.files);
  stats::ReportOptions& options = s.options;
  options.format = stats::ParseReportFormat(format, "--format");
  options.unit = stats::ParseLatencyUnit(unit, "--output-unit");
  options.method = stats::ParsePercentileMethod(method, "--method");
  if (vm->count("percentiles")) {
    options.percentiles = stats::ParsePercentileList(percentile_args, "--percentiles");
  } else {
    const auto d = stats::FioDefaultPercentiles();
    options.percentiles.assign(d.begin(), d.end());
  }
  if (slc_args.empty()) slc_args = {"sbk"};
  options.slc_percentiles = SlcList(slc_args, &options.slc_list_name);
  s.selection = ParseDirections(directions, combine);
  if (vm->count("ci") && !(options.ci >= 50 && options.ci < 100)) {
    throw stats::UsageError(
        fmt::format("--ci: expected a confidence level in percent, at least 50 and below 100, "
                    "got {}",
                    options.ci));
  }
  return s;
}

// Every quantum's rows, batch by batch: the figures (and the all-directions sums) computed in
// parallel, then the SLA checks and the rows in time order (without SLA targets, the rows' text is
// made in parallel too, and only written in order). SLA targets are checked on every
// direction present (and on all combined), whichever rows are shown; a shown row carries the
// verdict of its own direction. The all-directions sums are made only when a combined row is
// shown or targets are checked (each is a histogram's worth of memory per quantum of a batch, all
// in one buffer on huge pages: a vector each was a page fault per 4 KiB, 3 ms a batch on a VM).
void IntervalRows(stats::Merger& merger, const PctilesSettings& s, stats::SlaChecker& sla,
                  stats::PctilesReport& report) {
  const auto& layout = merger.layout();
  struct QuantumRows {
    std::span<double> combined;
    std::array<std::optional<stats::IntervalStats>, stats::kDirectionCount> each;
    std::optional<stats::IntervalStats> all;
    std::vector<std::string> text;  // the quantum's rows, made in parallel (without SLA targets)
  };
  const bool combine = s.selection.combined || !sla.empty();
  std::vector<QuantumRows> rows(stats::Merger::kBatchQuanta);
  const stats::LargeBuffer combined =
      stats::LargeBuffer::Bytes(combine ? rows.size() * layout.size() * sizeof(double) : 0);
  for (size_t i = 0; combine && i < rows.size(); ++i) {
    rows[i].combined = std::span<double>(combined.get() + i * layout.size(), layout.size());
  }
  merger.RunBatches([&](std::span<const stats::MergedQuantum> batch) {
    stats::ParallelForDynamic(batch.size(), merger.threads(), [&](size_t i, unsigned) {
      const stats::MergedQuantum& q = batch[i];
      QuantumRows& r = rows[i];
      std::fill(r.combined.begin(), r.combined.end(), 0.0);
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        r.each[d].reset();
        if (!merger.HasDirection(static_cast<stats::Direction>(d))) continue;
        if (s.selection.each[d])
          r.each[d] = stats::ComputeIntervalStats(q.counts[d], layout, s.options);
        for (size_t k = 0; k < r.combined.size(); ++k) r.combined[k] += q.counts[d][k];
      }
      r.all.reset();
      if (s.selection.combined) {
        r.all = stats::ComputeIntervalStats(std::span<const double>(r.combined), layout, s.options);
      }
      if (!sla.empty()) return;
      r.text.clear();
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        const auto dir = stats::DirectionName(static_cast<stats::Direction>(d));
        if (r.each[d]) r.text.push_back(report.FormatRow(q.start_ms, dir, *r.each[d]));
      }
      if (r.all) r.text.push_back(report.FormatRow(q.start_ms, "all", *r.all));
    });
    for (size_t i = 0; i < batch.size(); ++i) {
      const stats::MergedQuantum& q = batch[i];
      QuantumRows& r = rows[i];
      if (sla.empty()) {
        for (const std::string& text : r.text) report.WriteRow(false, text);
        continue;
      }
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        const auto dir = static_cast<stats::Direction>(d);
        if (!merger.HasDirection(dir)) continue;
        const auto verdict = sla.Check(q.start_ms, stats::DirectionName(dir), q.counts[d], layout);
        if (r.each[d]) report.Row(q.start_ms, stats::DirectionName(dir), *r.each[d], verdict);
      }
      if (!combine) continue;
      const auto verdict = sla.Check(q.start_ms, "all", r.combined, layout);
      if (r.all) report.Row(q.start_ms, "all", *r.all, verdict);
    }
  });
}

// The whole-run rows: each direction shown, then all combined.
void TotalRows(const stats::Merger& merger, const PctilesSettings& s,
               stats::PctilesReport& report) {
  const auto& layout = merger.layout();
  stats::Histogram all(layout.size());
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    const auto dir = static_cast<stats::Direction>(d);
    if (!merger.HasDirection(dir)) continue;
    if (s.selection.each[d]) {
      report.Row(std::nullopt, stats::DirectionName(dir),
                 stats::ComputeIntervalStats(merger.Total(dir).counts(), layout, s.options));
    }
    all.Merge(merger.Total(dir));
  }
  if (s.selection.combined) {
    report.Row(std::nullopt, "all", stats::ComputeIntervalStats(all.counts(), layout, s.options));
  }
}

// fio's layouts end where their last bucket begins (17.18 s for fio 3's 29 groups): what lies
// above was counted there by the writer (fio's clamp), so a percentile that falls in it is a lower
// bound. Says so when the input has counts there (a wide, 59-group log has none to say).
void NoteTopBucket(const stats::Merger& merger, std::ostream& err) {
  const stats::HistogramLayout& layout = merger.layout();
  if (layout.groups() >= stats::kWideGroups) return;
  const uint32_t top = layout.size() - 1;
  uint64_t n = 0;
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    const auto dir = static_cast<stats::Direction>(d);
    if (merger.HasDirection(dir)) n += merger.Total(dir).counts()[top];
  }
  if (n == 0) return;
  err << fmt::format(
      "iotail pctiles: note: {} sample(s) in the last bucket of the logs' layout: latencies of at "
      "least {:.2f} s (longer ones, past the layout's top at {:.2f} s, are counted there too); a "
      "percentile shown there is at least that (iotail run --log_hist_groups=59 logs them "
      "exactly)\n",
      n, layout.LowerNs(top) / 1e9, layout.UpperNs(top) / 1e9);
}

}  // namespace

CommandDoc PctilesDoc() {
  PctilesSettings s;
  PctilesArgs a;
  po::options_description description = PctilesDescription(s, a);
  s.input.AddTo(description);
  return ProgramOptionsDoc("pctiles", description);
}

int PctilesCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  if (const std::optional<int> status = RunCompat(args, out, err)) return *status;
  std::optional<PctilesSettings> settings = ParsePctiles(args, out);
  if (!settings) return 0;  // help
  PctilesSettings& s = *settings;
  const stats::ReportOptions& options = s.options;
  stats::SlaChecker sla(stats::ParseSlaTargets(s.sla, "--sla"), options.method);
  s.options.sla_column = !sla.empty();
  const stats::MergeOptions merge_options = s.input.ToMergeOptions(err, "pctiles");
  stats::Merger merger(s.input.files, merge_options);
  if (merger.Empty()) {
    PrintMergerWarnings(merger, "pctiles", err);
    err << "iotail pctiles: warning: the input holds no histogram records\n";
  }
  std::vector<std::pair<std::string, std::string>> context = {
      {"files", fmt::format("{}", s.input.files.size())},
      {"layout", merger.Empty() ? "none" : merger.layout().Describe()},
      {"time_quantum_ms", fmt::format("{}", merge_options.quantum_ms)},
      {"time_base", merger.epoch_times() ? "unix_epoch_ms" : "ms_since_job_start"}};
  if (options.format == stats::ReportFormat::kCsv) {
    err << fmt::format("iotail pctiles: SLC over the {} list ({} percentiles)\n",
                       options.slc_list_name, options.slc_percentiles.size());
  }
  stats::PctilesReport report(out, options, context);
  report.Begin();
  if (merger.Empty()) {
    report.End();
    return 0;
  }
  IntervalRows(merger, s, sla, report);
  TotalRows(merger, s, report);
  report.End(sla.empty() ? nullptr : &sla);
  PrintMergerWarnings(merger, "pctiles", err);
  NoteTopBucket(merger, err);
  if (!sla.empty() && options.format == stats::ReportFormat::kCsv) sla.WriteSummary(err, "time_ms");
  return sla.AnyViolated() ? kExitSlaViolated : 0;
}

}  // namespace iotail::cli
