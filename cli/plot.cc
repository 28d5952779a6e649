// iotail plot: charts of histogram logs (fio's or iotail's, single or merged) as one
// self-contained HTML report or one SVG file per chart (stats/report/plot_report.h).
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/log_input_options.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
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
  stats::Merger merger(input.files, merge_options);
  if (merger.Empty()) {
    PrintMergerWarnings(merger, "plot", err);
    throw stats::UsageError("the input holds no histogram records: nothing to plot");
  }
  options.source =
      fmt::format("{} log file(s), {} layout, {} time", input.files.size(),
                  merger.layout().Describe(), merger.epoch_times() ? "Unix-epoch" : "relative");
  stats::PlotReport report(merger.layout(), options);
  std::array<bool, stats::kDirectionCount> present{};
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    present[d] = merger.HasDirection(static_cast<stats::Direction>(d));
  }
  merger.Run(
      [&](const stats::MergedQuantum& q) { report.Add(q.start_ms, q.counts, q.bytes, present); });
  std::array<const stats::Histogram*, stats::kDirectionCount> totals{};
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    if (present[d]) totals[d] = &merger.Total(static_cast<stats::Direction>(d));
  }
  report.Finish(totals, merger.bytes_known(), merger.data_end_ms());
  PrintMergerWarnings(merger, "plot", err);

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
