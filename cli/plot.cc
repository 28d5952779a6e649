// iotail plot: charts of histogram logs (fio's or iotail's, single or merged) as one
// self-contained HTML report or one SVG file per chart (stats/report/plot_report.h).
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <memory>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/log_input_options.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/record/explain_sink.h"
#include "stats/report/plot_report.h"
#include "stats/util/output_file.h"

namespace po = boost::program_options;

namespace iotail::cli {
namespace {

struct PlotArgs {
  LogInputOptions input;
  std::vector<std::string> sla_args;
  std::string output = "report.html", format = "html", title = "iotail latency report";
};

// plot's own options (LogInputOptions adds the inputs'), bound to `a`.
po::options_description PlotDescription(PlotArgs& a) {
  po::options_description description(
      "usage: iotail plot [options] FILES... [-o report.html]\n\n"
      "Charts of fio-format histogram logs (fio's or iotail's, one or many, merged on time\n"
      "quanta as by `iotail pctiles`): per direction, latency percentiles over time, a latency\n"
      "heat map, IOPS and bandwidth over time, SLC over time and the whole run's exceedance\n"
      "curve. One self-contained HTML file (inline SVG, nothing fetched) or one SVG per chart.\n\n"
      "The stage logs of `iotail run --explain --write_hist_log=P` (P_explain_STAGE_hist.N.log,\n"
      "known by that name) may be given too, e.g. `iotail plot P_clat_hist.*.log\n"
      "P_explain_*_hist.*.log`: each stage's files are merged on their own (never into the\n"
      "latency charts) into a stacked chart per direction of the stages' mean over time\n"
      "(schedule, submit, queue, device, delivery), next to that direction's latency charts.\n\n"
      "options");
  // clang-format off
  description.add_options()
      ("help,h", "show this help (--help=man: the iotail-plot(1) page)")
      ("output,o", po::value(&a.output)->default_value(a.output),
       "the HTML file; with --format=svg, the prefix of the SVG files (PREFIX-CHART.svg)")
      ("format", po::value(&a.format)->default_value(a.format), "html or svg")
      ("title", po::value(&a.title)->default_value(a.title), "the report's title")
      ("sla", po::value(&a.sla_args)->multitoken(),
       "latency targets drawn as lines: [read|write|trim:]p99<=2ms, max<1s");
  // clang-format on
  return description;
}

// The input files by kind: the latency logs, and each --explain stage's logs (named
// PREFIX_explain_<stage>_hist.N.log by `iotail run --explain --write_hist_log=PREFIX`).
struct PlotInputs {
  std::vector<std::string> latency;
  std::array<std::vector<std::string>, stats::kStageCount> stages;
  size_t stage_files = 0;
};

PlotInputs SplitInputs(const std::vector<std::string>& files) {
  PlotInputs inputs;
  for (const std::string& path : files) {
    const std::string kind = LogKindOf(path);
    size_t stage = 0;
    while (stage < stats::kStageCount &&
           kind != fmt::format("explain_{}", stats::kStageNames[stage])) {
      ++stage;
    }
    if (stage == stats::kStageCount) {
      inputs.latency.push_back(path);
    } else {
      inputs.stages[stage].push_back(path);
      ++inputs.stage_files;
    }
  }
  return inputs;
}

// The mergers of the inputs: the latency logs' (null without any) and each stage's that has logs.
struct PlotMergers {
  std::unique_ptr<stats::Merger> latency;
  std::vector<std::pair<stats::Stage, std::unique_ptr<stats::Merger>>> stages;
  // The merger whose layout and time base the report names: the latency logs', else a stage's.
  const stats::Merger* Main() const {
    if (latency) return latency.get();
    return stages.empty() ? nullptr : stages.front().second.get();
  }
};

// Opens the mergers, leaving out those whose input holds no record (after naming their damage);
// throws UsageError when nothing at all is left to plot.
PlotMergers OpenMergers(const PlotInputs& inputs, const stats::MergeOptions& merge_options,
                        std::ostream& err) {
  PlotMergers m;
  auto open = [&](const std::vector<std::string>& files) -> std::unique_ptr<stats::Merger> {
    auto merger = std::make_unique<stats::Merger>(files, merge_options);
    if (!merger->Empty()) return merger;
    PrintMergerWarnings(*merger, "plot", err);
    return nullptr;
  };
  if (!inputs.latency.empty()) m.latency = open(inputs.latency);
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    if (inputs.stages[s].empty()) continue;
    if (auto merger = open(inputs.stages[s]))
      m.stages.emplace_back(static_cast<stats::Stage>(s), std::move(merger));
  }
  if (m.Main() == nullptr)
    throw stats::UsageError("the input holds no histogram records: nothing to plot");
  return m;
}

// Streams every merger's quanta into the report (the latency logs' first) and finishes it.
void FillReport(PlotMergers& m, stats::PlotReport& report, std::ostream& err) {
  std::array<bool, stats::kDirectionCount> present{};
  std::array<const stats::Histogram*, stats::kDirectionCount> totals{};
  if (m.latency) {
    stats::Merger& merger = *m.latency;
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      present[d] = merger.HasDirection(static_cast<stats::Direction>(d));
    }
    merger.Run(
        [&](const stats::MergedQuantum& q) { report.Add(q.start_ms, q.counts, q.bytes, present); });
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      if (present[d]) totals[d] = &merger.Total(static_cast<stats::Direction>(d));
    }
    PrintMergerWarnings(merger, "plot", err);
  }
  for (auto& [stage, merger] : m.stages) {
    std::array<bool, stats::kDirectionCount> stage_present{};
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      stage_present[d] = merger->HasDirection(static_cast<stats::Direction>(d));
    }
    merger->Run([&, stage = stage, &layout = merger->layout()](const stats::MergedQuantum& q) {
      report.AddStage(stage, layout, q.start_ms, q.counts, stage_present);
    });
    PrintMergerWarnings(*merger, "plot", err);
  }
  report.Finish(totals, m.latency && m.latency->bytes_known(),
                m.latency ? m.latency->data_end_ms() : 0);
}

}  // namespace

CommandDoc PlotDoc() { return LogCommandDoc<PlotArgs>("plot", PlotDescription); }

int PlotCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  PlotArgs a;
  LogInputOptions& input = a.input;
  std::vector<std::string>& sla_args = a.sla_args;
  const std::string &output = a.output, &format = a.format, &title = a.title;
  po::options_description description = PlotDescription(a);
  const std::optional<po::variables_map> vm = input.Parse(args, description, out);
  if (!vm) return 0;
  // `--sla 'p99<=2ms' FILE`: the first word without a comparison is a file.
  auto first_file = std::find_if(sla_args.begin(), sla_args.end(), [](const std::string& v) {
    return v.find('<') == std::string::npos;
  });
  input.files.insert(input.files.begin(), first_file, sla_args.end());
  sla_args.erase(first_file, sla_args.end());
  if (format != "html" && format != "svg") {
    throw stats::UsageError(fmt::format("--format: expected html or svg, got '{}'", format));
  }
  if (input.files.empty()) throw stats::UsageError("no input files (iotail plot FILES... -o OUT)");

  stats::PlotOptions options;
  options.title = title;
  options.sla = stats::ParseSlaTargets(sla_args, "--sla");
  const stats::MergeOptions merge_options = input.ToMergeOptions(err, "plot");
  options.quantum_ms = merge_options.quantum_ms;
  const PlotInputs inputs = SplitInputs(input.files);
  PlotMergers mergers = OpenMergers(inputs, merge_options, err);
  const stats::Merger& main = *mergers.Main();
  options.source = fmt::format(
      "{} log file(s){}, {} layout, {} time", input.files.size(),
      inputs.stage_files ? fmt::format(" ({} of them --explain stage logs)", inputs.stage_files)
                         : std::string(),
      main.layout().Describe(), main.epoch_times() ? "Unix-epoch" : "relative");
  stats::PlotReport report(main.layout(), options);
  FillReport(mergers, report, err);

  if (format == "html") {
    stats::OutputFile file(output, "--output");
    file.Write(report.Html());
    file.Commit();
    err << fmt::format("iotail plot: {} charts -> '{}'\n", report.Charts().size(), output);
    return 0;
  }
  std::string prefix = output;
  for (const char* ext : {".html", ".svg"}) {
    if (prefix.ends_with(ext)) prefix.resize(prefix.size() - std::string_view(ext).size());
  }
  for (const stats::NamedChart& chart : report.Charts()) {
    const std::string path = fmt::format("{}-{}.svg", prefix, chart.name);
    stats::OutputFile file(path, "--output");
    file.Write(chart.svg);
    file.Commit();
    out << path << "\n";
  }
  return 0;
}

}  // namespace iotail::cli
