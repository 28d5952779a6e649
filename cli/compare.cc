// iotail compare A B: did B get faster or slower than A? Per direction and percentile, the
// difference B - A with its confidence interval and a verdict (stats/core/percentile_compare.h);
// the inputs are read by cli/compare_inputs.h, the output written by stats/report/compare_report.h.
// With one repetition on a side (or on both), each side's repetitions are pooled and the interval
// comes from order statistics over the counts; with at least two on each side, from Welch's t over
// the repetitions' percentiles. A side of plain JSON summaries (no bins) with one repetition gives
// the printed percentiles' difference and no interval (verdict "no interval"; --fail-on is then
// refused). Exit status: 0; 2 on bad input (naming the file or option); 3 when a --fail-on check
// finds B significantly worse than its allowed margin.
#include <fmt/format.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/compare_inputs.h"
#include "cli/log_input_options.h"
#include "stats/core/errors.h"
#include "stats/core/percentile_compare.h"
#include "stats/core/percentiles.h"
#include "stats/report/compare_report.h"
#include "stats/util/option_text.h"

namespace po = boost::program_options;

namespace iotail::cli {
namespace {

constexpr int kExitWorse = 3;
constexpr double kDefaultPercentiles[] = {50, 90, 99, 99.9};

// A --fail-on target: [DIR:]pN:+X% (a share of A's percentile) or [DIR:]pN:+X<unit>.
struct FailOn {
  std::string text;
  std::optional<stats::Direction> dir;
  double percentile = 0;
  double share = -1;  // X% as a fraction (-1: absolute)
  double margin_ns = 0;
  // The same check (a target given twice, however spelled): tested and printed once.
  bool SameCheck(const FailOn& o) const {
    return dir == o.dir && percentile == o.percentile && share == o.share &&
           margin_ns == o.margin_ns;
  }
};

FailOn ParseFailOn(const std::string& text) {
  auto fail = [&](std::string_view why) -> FailOn {
    throw stats::UsageError(fmt::format(
        "--fail-on: bad target '{}': {} (expected [read|write|trim:]pN:+X% or pN:+Xms, e.g. "
        "'p99:+10%')",
        text, why));
  };
  FailOn f;
  f.text = text;
  std::string_view rest = text;
  const size_t last = rest.rfind(':');
  if (last == std::string_view::npos) return fail("no ':' before the margin");
  std::string_view margin = rest.substr(last + 1);
  rest = rest.substr(0, last);
  if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
    f.dir = stats::DirectionNamed(rest.substr(0, colon));
    if (!f.dir) return fail(fmt::format("unknown direction '{}'", rest.substr(0, colon)));
    rest = rest.substr(colon + 1);
  }
  const auto p =
      rest.size() > 1 && rest[0] == 'p' ? stats::ParseFiniteDouble(rest.substr(1)) : std::nullopt;
  if (!p || *p < 0 || *p > 100) return fail(fmt::format("'{}' is not a percentile p0..p100", rest));
  f.percentile = *p;
  if (margin.starts_with('+')) margin.remove_prefix(1);
  double scale = 0;
  for (const auto& [suffix, ns] : {std::pair<std::string_view, double>{"%", -1},
                                   {"ns", 1},
                                   {"us", 1e3},
                                   {"ms", 1e6},
                                   {"s", 1e9}}) {
    if (margin.ends_with(suffix)) {
      margin.remove_suffix(suffix.size());
      scale = ns;
      break;
    }
  }
  const auto value = stats::ParseFiniteDouble(margin);
  if (scale == 0 || !value || *value < 0) return fail("the margin is not +X% or +X with a unit");
  if (scale < 0) {
    f.share = *value / 100;
  } else {
    f.margin_ns = *value * scale;
  }
  return f;
}

// Why a --fail-on target has no row to test: the directions and percentiles compared.
std::string UnmatchedFailOn(const FailOn& f, const std::vector<stats::CompareRow>& rows) {
  std::vector<std::string> dirs, pcts;
  for (const stats::CompareRow& row : rows) {
    if (std::find(dirs.begin(), dirs.end(), row.dir) == dirs.end()) dirs.push_back(row.dir);
    const std::string p = stats::PercentileLabel(row.percentile);
    if (std::find(pcts.begin(), pcts.end(), p) == pcts.end()) pcts.push_back(p);
  }
  const bool dir_missing =
      f.dir && std::find(dirs.begin(), dirs.end(), stats::DirectionName(*f.dir)) == dirs.end();
  return fmt::format(
      "--fail-on '{}': {} is not compared (directions with samples on both sides: {}; "
      "percentiles: {}), so the target would pass on nothing",
      f.text,
      dir_missing ? fmt::format("the {} direction", stats::DirectionName(*f.dir))
                  : stats::PercentileLabel(f.percentile),
      fmt::join(dirs, ", "), fmt::join(pcts, " "));
}

struct CompareSettings {
  std::string a, b;
  std::vector<double> percentiles;
  double confidence = 0.95;
  bool json = false;
  stats::LatencyUnit unit = stats::LatencyUnit::kUs;
  SummaryLatency latency = SummaryLatency::kClat;
  bool recorded = false;  // A: the latencies a replay's trace recorded; B: the replayed
  std::vector<FailOn> fail_on;
};

// compare's options, bound to `a`.
struct CompareArgs {
  std::vector<std::string> percentile_args, fail_on, inputs;
  std::string format = "text", unit = "us", latency = "clat";
  double ci = 95;
  bool recorded = false;
};

po::options_description CompareDescription(CompareArgs& a) {
  po::options_description description(
      "usage: iotail compare [options] A B\n"
      "       iotail compare --recorded [options] REPLAY.json [B]\n\n"
      "Compares two runs per direction and percentile: B - A, its confidence interval and a\n"
      "verdict (faster, slower, no significant difference). A and B are each REP[,REP...]: the\n"
      "repetitions of a run, each FILE[+FILE...] (the files of one repetition: its histogram\n"
      "logs, fio's or iotail's, or a JSON summary with bins, iotail run --output-format=json+).\n"
      "One repetition on a side: order statistics over the pooled counts; two or more on both\n"
      "sides: Welch's t over the repetitions' percentiles. A plain JSON summary (fio's\n"
      "--output-format=json) has no bins: its printed percentiles are compared, without an\n"
      "interval unless both sides have two repetitions or more. --recorded sets a replay\n"
      "against what its trace recorded (A: the trace's latencies, B: the replayed "
      "ones).\n\noptions");
  // clang-format off
  description.add_options()
      ("help,h", "show this help (--help=man: the iotail-compare(1) page)")
      ("percentiles", po::value(&a.percentile_args),
       "percentiles to compare: '50:90:99:99.9' (the default)")
      ("ci", po::value(&a.ci)->default_value(a.ci), "confidence level in percent")
      ("output-format", po::value(&a.format)->default_value(a.format), "text or json")
      ("output-unit", po::value(&a.unit)->default_value(a.unit), "latency unit: ns, us or ms")
      ("latency", po::value(&a.latency)->default_value(a.latency),
       "which latency of a JSON summary: clat, lat (fio's, with lat_percentiles) or olat (iotail's "
       "open-loop latency of a rate-limited run, iotail_olat_ns); histogram logs hold their own")
      ("recorded", po::bool_switch(&a.recorded),
       "A is what a replayed trace recorded (blktrace's dispatch to completion, device time):\n"
       "A's JSON summaries are read for iotail_replay's recorded_ns (its histogram logs,\n"
       "PREFIX_recorded_hist.N.log, as they are); B is the replay (by default the same\n"
       "summary's clat, when only A is given)")
      ("fail-on", po::value(&a.fail_on),
       "exit status 3 when B is significantly worse than A by more than a margin:\n"
       "[read|write|trim:]pN:+X% (of A's) or pN:+Xms; may be repeated");
  // clang-format on
  return description;
}

std::optional<CompareSettings> ParseCompare(CommandArgs args, std::ostream& out) {
  CompareArgs a;
  const po::options_description description = CompareDescription(a);
  if (!ParseWithInputs(args, description, a.inputs, out)) return std::nullopt;  // help
  CompareSettings s;
  s.recorded = a.recorded;
  if (a.recorded && a.inputs.size() == 1) a.inputs.push_back(a.inputs[0]);  // B: the same run
  if (a.inputs.size() != 2) {
    throw stats::UsageError(fmt::format(
        "expected two inputs, A and B, got {} (see iotail compare --help)", a.inputs.size()));
  }
  s.a = a.inputs[0];
  s.b = a.inputs[1];
  if (a.percentile_args.empty()) {
    s.percentiles.assign(std::begin(kDefaultPercentiles), std::end(kDefaultPercentiles));
  } else {
    s.percentiles = stats::ParsePercentileList(a.percentile_args, "--percentiles");
  }
  if (!(a.ci >= 50 && a.ci < 100)) {
    throw stats::UsageError(fmt::format(
        "--ci: expected a confidence level in percent, at least 50 and below 100, got {}", a.ci));
  }
  s.confidence = a.ci / 100;
  if (a.format != "text" && a.format != "json") {
    throw stats::UsageError(
        fmt::format("--output-format: expected text or json, got '{}'", a.format));
  }
  s.json = a.format == "json";
  s.unit = stats::ParseLatencyUnit(a.unit, "--output-unit");
  if (a.latency != "clat" && a.latency != "lat" && a.latency != "olat") {
    throw stats::UsageError(
        fmt::format("--latency: expected clat, lat or olat, got '{}'", a.latency));
  }
  s.latency = a.latency == "clat"  ? SummaryLatency::kClat
              : a.latency == "lat" ? SummaryLatency::kLat
                                   : SummaryLatency::kOlat;
  for (const std::string& text : a.fail_on) {
    FailOn f = ParseFailOn(text);
    if (std::any_of(s.fail_on.begin(), s.fail_on.end(),
                    [&](const FailOn& seen) { return seen.SameCheck(f); })) {
      continue;
    }
    s.fail_on.push_back(std::move(f));
    const double p = s.fail_on.back().percentile;
    if (std::find(s.percentiles.begin(), s.percentiles.end(), p) == s.percentiles.end()) {
      s.percentiles.push_back(p);
    }
  }
  return s;
}

// One side's repetitions that have direction d: their histograms, or (summaries without bins)
// their printed percentiles.
struct DirectionReps {
  std::vector<const stats::Histogram*> histograms;
  std::vector<const PrintedPercentiles*> printed;
  size_t size() const { return histograms.size() + printed.size(); }
  uint64_t Samples() const {
    uint64_t n = 0;
    for (const stats::Histogram* h : histograms) n += h->Total();
    for (const PrintedPercentiles* p : printed) n += p->samples;
    return n;
  }
  // The percentile of each repetition (fio's rule on a histogram, or as printed).
  std::vector<double> Each(double p, const stats::HistogramLayout& layout,
                           std::string_view label) const {
    std::vector<double> values;
    const double list[] = {p};
    for (const stats::Histogram* h : histograms) {
      values.push_back(
          stats::ComputePercentiles(h->counts(), layout, list, stats::PercentileMethod::kFio)
              .front());
    }
    for (const PrintedPercentiles* printed_one : printed)
      values.push_back(printed_one->At(p, label));
    return values;
  }
};

DirectionReps RepsOf(const CompareSide& side, int d) {
  DirectionReps reps;
  for (const auto& rep : side.repetitions) {
    if (rep.dirs[d]) reps.histograms.push_back(&*rep.dirs[d]);
    if (rep.printed[d]) reps.printed.push_back(&*rep.printed[d]);
  }
  return reps;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// The rows of one direction present on both sides.
void CompareDirection(const CompareSide& a, const CompareSide& b, int d, const CompareSettings& s,
                      stats::CompareResult& result) {
  const DirectionReps ra = RepsOf(a, d), rb = RepsOf(b, d);
  if (ra.size() == 0 || rb.size() == 0) return;
  auto pooled = [&](const std::vector<const stats::Histogram*>& hs) {
    stats::Histogram sum(a.layout.size());
    for (const stats::Histogram* h : hs) sum.Merge(*h);
    return sum;
  };
  const bool repetitions = ra.size() >= 2 && rb.size() >= 2;
  const bool printed = !ra.printed.empty() || !rb.printed.empty();
  const stats::Histogram pa = pooled(ra.histograms), pb = pooled(rb.histograms);
  for (double p : s.percentiles) {
    stats::CompareRow row;
    row.dir = stats::DirectionName(static_cast<stats::Direction>(d));
    row.percentile = p;
    row.samples_a = ra.Samples();
    row.samples_b = rb.Samples();
    row.repetitions = repetitions;
    row.printed = printed && !repetitions;
    if (repetitions) {
      const std::vector<double> values_a = ra.Each(p, a.layout, "A");  // A's errors first
      row.comparison = stats::CompareRepetitions(values_a, rb.Each(p, b.layout, "B"), s.confidence);
    } else if (printed) {
      // No bins on a side: the printed values (a side's mean over its repetitions), no interval.
      const double value_a = Mean(ra.Each(p, a.layout, "A"));  // A's errors first
      row.comparison = stats::ComparePrinted(value_a, Mean(rb.Each(p, b.layout, "B")));
    } else {
      row.comparison =
          stats::CompareHistograms(pa.counts(), pb.counts(), a.layout, p, s.confidence);
    }
    result.rows.push_back(std::move(row));
  }
}

// --recorded: what each side is, and the caveat of comparing a device time with a replay's clat.
void DescribeRecorded(const CompareSettings& s, stats::CompareResult& result) {
  result.a.what = "recorded by the trace (blktrace's dispatch to completion: device time)";
  const bool device = s.b.find("explain_device_hist") != std::string::npos;
  const char* name = s.latency == SummaryLatency::kClat  ? "clat (submission to reaping)"
                     : s.latency == SummaryLatency::kLat ? "lat (submission start to reaping)"
                                                         : "olat (intended start to reaping)";
  result.b.what = device ? "replayed, --explain's device stage (dispatch to completion)"
                         : fmt::format("replayed, {}", name);
  result.notes.push_back(
      device ? "like for like: both sides are the device's time, dispatch to completion"
             : "B holds more than the device's time A recorded (the queue before dispatch and "
               "the reaping after completion), so B - A includes it; the like-for-like replayed "
               "measure is --explain's device stage: give B as PREFIX_explain_device_hist.N.log");
}

}  // namespace

CommandDoc CompareDoc() {
  CompareArgs a;
  return ProgramOptionsDoc("compare", CompareDescription(a));
}

int CompareCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  std::optional<CompareSettings> settings = ParseCompare(args, out);
  if (!settings) return 0;
  const CompareSettings& s = *settings;
  if (s.recorded && s.a == s.b) {
    for (const std::string_view file : stats::SplitList(s.a, ',')) {
      for (const std::string_view one : stats::SplitList(file, '+')) {
        if (!IsJsonSummary(std::string(one), "A")) {
          throw stats::UsageError(fmt::format(
              "--recorded with one input reads A and B from the same JSON summary, and '{}' is "
              "not one (a histogram log? give both, PREFIX_recorded_hist.N.log "
              "PREFIX_clat_hist.N.log; a summary needs --output-format=json+ alone)",
              one));
        }
      }
    }
  }
  CompareSide a = LoadCompareSide(s.a, "A", s.recorded ? SummaryLatency::kRecorded : s.latency);
  CompareSide b = LoadCompareSide(s.b, "B", s.latency);
  ToCommonLayout(a, b);
  stats::CompareResult result;
  result.confidence = s.confidence;
  result.a = {s.a, a.repetitions.size(), {}};
  result.b = {s.b, b.repetitions.size(), {}};
  if (s.recorded) DescribeRecorded(s, result);
  for (int d = 0; d < stats::kDirectionCount; ++d) CompareDirection(a, b, d, s, result);
  if (result.rows.empty()) {
    throw stats::UsageError(
        fmt::format("A ('{}') and B ('{}') have no direction with samples in common", s.a, s.b));
  }
  for (const FailOn& f : s.fail_on) {
    bool matched = false;
    for (const stats::CompareRow& row : result.rows) {
      if (row.percentile != f.percentile) continue;
      if (f.dir && row.dir != stats::DirectionName(*f.dir)) continue;
      matched = true;
      if (row.printed) {
        throw stats::UsageError(fmt::format(
            "--fail-on '{}': a side is a JSON summary without histogram bins (fio's "
            "--output-format=json), so B - A has no confidence interval to test: give json+ "
            "summaries or histogram logs, or two repetitions or more on each side",
            f.text));
      }
      if (std::isnan(row.comparison.lower_ns)) {
        throw stats::UsageError(fmt::format(
            "--fail-on '{}': the repetitions of each side hold the same {} of {} (no "
            "run-to-run spread: the same file listed twice?), so B - A has no interval to test",
            f.text, row.dir, stats::PercentileLabel(row.percentile)));
      }
      stats::FailOnCheck check;
      check.target = f.text;
      check.dir = row.dir;
      check.allowed_ns = f.share >= 0 ? f.share * row.comparison.a_ns : f.margin_ns;
      check.diff_lower_ns = row.comparison.lower_ns;
      check.failed = check.diff_lower_ns > check.allowed_ns;
      result.checks.push_back(std::move(check));
    }
    // A gate on nothing never passes silently (issue 38): the direction or the percentile it
    // names is not among the rows both sides have.
    if (!matched) throw stats::UsageError(UnmatchedFailOn(f, result.rows));
  }
  if (s.json) {
    if (std::any_of(result.rows.begin(), result.rows.end(),
                    [](const stats::CompareRow& row) { return row.printed; })) {
      err << "iotail compare: a side is a JSON summary with no histogram bins (fio's "
             "--output-format=json): its printed percentiles are compared, without a confidence "
             "interval (json+ or histogram logs give one)\n";
    }
    stats::WriteCompareJson(out, result, s.unit);
  } else {
    stats::WriteCompareText(out, result, s.unit);
  }
  bool failed = false;
  for (const stats::FailOnCheck& check : result.checks) {
    if (!check.failed) continue;
    failed = true;
    err << fmt::format("iotail compare: {} ({}): B is significantly worse than allowed\n",
                       check.target, check.dir);
  }
  return failed ? kExitWorse : 0;
}

}  // namespace iotail::cli
