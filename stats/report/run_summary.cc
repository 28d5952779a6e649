#include "stats/report/run_summary.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <sstream>

#include "stats/core/fio_numbers.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/latency_figures.h"
#include "stats/core/percentiles.h"
#include "stats/core/slc.h"
#include "stats/report/error_report.h"
#include "stats/report/explain_report.h"
#include "stats/report/fio_json_extras.h"
#include "stats/report/fio_text_extras.h"
#include "stats/report/summary_figures.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

using Out = std::back_insert_iterator<std::string>;

struct DirFigures {
  double iops = 0, bw_bytes = 0;
  std::vector<double> pct;
  std::vector<double> olat_pct;  // the open loop's olat (rate-limited mode) only
  SlcFactors slc;
  bool has_slc = false;
};

// One latency's numbers as JSON and text need them.
struct LatencyView {
  const LatencySnapshot* lat = nullptr;
  const std::vector<double>* pct = nullptr;  // nullptr: no percentiles or bins
};

DirFigures Figures(const DirectionSnapshot& d, const RunSummary& s, double runtime_s) {
  DirFigures f;
  if (runtime_s > 0) {
    f.iops = static_cast<double>(d.ios) / runtime_s;
    f.bw_bytes = static_cast<double>(d.bytes) / runtime_s;
  }
  const HistogramLayout layout = HistogramLayout::Recorded();
  if (d.ios > 0 && d.clat.n > 0 && !d.clat.hist.empty()) {
    LatencyFigures figures =
        ComputeLatencyFigures(std::span<const uint64_t>(d.clat.hist), layout, s.percentiles,
                              SbkSlcPercentiles(), PercentileMethod::kFio);
    f.pct = std::move(figures.percentiles);
    f.slc = figures.slc;
    f.has_slc = figures.has_slc;
  }
  if (d.olat.n > 0 && !d.olat.hist.empty()) {
    f.olat_pct = ComputePercentiles(std::span<const uint64_t>(d.olat.hist), layout, s.percentiles,
                                    PercentileMethod::kFio);
  }
  return f;
}

void JsonLatency(Out o, const LatencyView& v, const RunSummary& s) {
  JsonLatencyObject(o, *v.lat, s.percentiles, v.pct, s.json_bins);
}

// `"prios": [{"prioclass": C, "prio": L, "clat_ns": {...}}, ...]`, as fio 3.33's JSON.
void JsonPrios(Out o, const DirectionSnapshot& d, const RunSummary& s) {
  if (PriosWithSamples(d) < 2) return;
  fmt::format_to(o, ", \"prios\": [");
  bool first = true;
  for (const PrioLatency& p : d.prios) {
    if (p.lat.n == 0) continue;
    const std::vector<double> pct = PrioPercentiles(p, s.percentiles);
    fmt::format_to(o, "{}{{\"prioclass\": {}, \"prio\": {}, \"clat_ns\": ", first ? "" : ", ",
                   p.ioprio >> 13, p.ioprio & 7);
    JsonLatency(o, {&p.lat, &pct}, s);
    fmt::format_to(o, "}}");
    first = false;
  }
  fmt::format_to(o, "]");
}

void JsonDirection(Out o, const DirectionSnapshot& d, const RunSummary& s, double runtime_s,
                   const RateSamples& samples, int dir, double group_bw_kib, bool no_lat) {
  const DirFigures f = Figures(d, s, runtime_s);
  const uint64_t runtime_ms = FioRuntimeMs(runtime_s);
  fmt::format_to(o,
                 "{{\"io_bytes\": {}, \"io_kbytes\": {}, \"bw_bytes\": {}, \"bw\": {}, "
                 "\"iops\": {:.6f}, \"runtime\": {}, \"total_ios\": {}, \"short_ios\": 0, "
                 "\"drop_ios\": 0, \"slat_ns\": ",
                 d.bytes, d.bytes / 1024, static_cast<uint64_t>(f.bw_bytes),
                 static_cast<uint64_t>(f.bw_bytes / 1024), f.iops, d.ios ? runtime_ms : 0, d.ios);
  JsonLatency(o, {&d.slat, nullptr}, s);
  fmt::format_to(o, ", \"clat_ns\": ");
  JsonLatency(o, {&d.clat, &f.pct}, s);
  // lat = slat + clat (start to completion), fio's in every mode. The open loop's latency from the
  // intended start is iotail's own key, with its percentiles and bins.
  fmt::format_to(o, ", \"lat_ns\": ");
  static const LatencySnapshot kUnmeasured;
  JsonLatency(o, {no_lat ? &kUnmeasured : &d.TotalLatency(), nullptr}, s);
  if (d.olat.n > 0) {
    fmt::format_to(o, ", \"iotail_olat_ns\": ");
    JsonLatency(o, {&d.olat, &f.olat_pct}, s);
  }
  JsonPrios(o, d, s);
  JsonRateSampleFields(o, samples, dir, group_bw_kib);
  if (f.has_slc) {
    fmt::format_to(o,
                   ", \"iotail_slc\": {{\"slc1\": {}, \"slc2\": {}, \"slc1_mean\": {:.6f}, "
                   "\"slc2_mean\": {:.6f}}}",
                   f.slc.slc1, f.slc.slc2, f.slc.slc1_mean, f.slc.slc2_mean);
  }
  if (d.ios > 0) {
    static const std::vector<uint64_t> kNone;
    JsonPercentileIntervals(o, d.clat.hist, d.olat.n > 0 ? d.olat.hist : kNone, s.percentiles);
  }
  fmt::format_to(o, "}}");
}

std::string JsonOptions(const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out = "{";
  for (size_t i = 0; i < options.size(); ++i) {
    out += fmt::format("{}\"{}\": \"{}\"", i ? ", " : "", JsonEscape(options[i].first),
                       JsonEscape(options[i].second));
  }
  return out + "}";
}

void JsonJob(Out o, const JobTotals& job, const RunSummary& s) {
  const RecorderSnapshot& t = job.totals;
  const CpuUsage& cpu = job.cpu;
  const double runtime_s = JobRuntime(job, s);
  int first_errno = 0;
  for (size_t e = 1; e < t.errors.size() && first_errno == 0; ++e) {
    if (t.errors[e] != 0) first_errno = static_cast<int>(e);
  }
  fmt::format_to(o, "{{\"jobname\": \"{}\", \"groupid\": {}, \"error\": {}, \"eta\": 0, ",
                 JsonEscape(job.name), job.groupid, first_errno);
  fmt::format_to(o, "\"elapsed\": {}, \"job options\": {}, ",
                 static_cast<uint64_t>(std::ceil(s.elapsed_s >= 0 ? s.elapsed_s : runtime_s)),
                 JsonOptions(job.options));
  for (int d = 0; d < kDirectionCount; ++d) {
    // fio's bw_agg: this job's mean bandwidth as a share of its reporting group's.
    const double group_bw_kib = GroupBandwidthKib(s, job.groupid, d);
    fmt::format_to(o, "\"{}\": ", DirectionName(static_cast<Direction>(d)));
    JsonDirection(o, t.dirs[d], s, DirRuntime(job, s, d), job.samples, d, group_bw_kib,
                  job.no_total_latency);
    fmt::format_to(o, ", ");
  }
  JsonSyncField(o, job.syncs, job.datasyncs);
  fmt::format_to(o, ", ");
  fmt::format_to(o,
                 "\"job_runtime\": {}, \"usr_cpu\": {:.6f}, \"sys_cpu\": {:.6f}, \"ctx\": {}, "
                 "\"majf\": {}, \"minf\": {}",
                 job.runtime_sum_ms >= 0 ? static_cast<uint64_t>(job.runtime_sum_ms)
                                         : static_cast<uint64_t>(std::llround(runtime_s * 1000)),
                 cpu.UsrPct(), cpu.SysPct(), cpu.ctx, cpu.majf, cpu.minf);
  JsonDepthAndLatencyFields(o, job);
  if (!job.description.empty())
    fmt::format_to(o, ", \"desc\": \"{}\"", JsonEscape(job.description));
  if (job.steady_state) {
    fmt::format_to(o, ", ");
    JsonSteadyState(o, *job.steady_state);
  }
  fmt::format_to(o, ", ");
  fmt::format_to(o, "\"iotail_errors\": {{\"total\": {}, \"by_errno\": {{", t.TotalErrors());
  bool first = true;
  for (size_t e = 0; e < t.errors.size(); ++e) {
    if (t.errors[e] == 0) continue;
    fmt::format_to(o, "{}\"{}\": {}", first ? "" : ", ", ErrnoName(static_cast<int>(e)),
                   t.errors[e]);
    first = false;
  }
  fmt::format_to(o, "}}}}");
  if (job.explain) {
    std::string explain;
    AppendExplainJson(explain, *job.explain, s.percentiles, s.json_bins);
    fmt::format_to(o, ", {}", explain);
  }
  fmt::format_to(o, "}}");
}

// "    clat (nsec): min=..." for one latency (nothing when it was not measured).
void TextLatency(Out o, const char* name, const LatencySnapshot& l, const char* note) {
  if (l.n == 0) return;
  std::string line;
  TextLatencyLine(line, name, l.min_ns, l.max_ns, l.MeanNs(), l.StddevNs(), note);
  fmt::format_to(o, "{}", line);
}

// One direction of a job as fio's show_ddir_status prints it (with iotail's SLC line after it).
void TextDirection(std::string& out, Direction dir, const JobTotals& job, const RunSummary& s) {
  const int di = static_cast<int>(dir);
  const DirectionSnapshot& d = job.totals.dirs[static_cast<size_t>(di)];
  const double runtime_s = DirRuntime(job, s, di);
  const uint64_t runtime_ms = FioRuntimeMs(runtime_s);
  if (d.bytes == 0 || runtime_ms == 0) return;
  Out o(out);
  const DirFigures f = Figures(d, s, runtime_s);
  fmt::format_to(
      o, "  {}: IOPS={}, BW={}/s ({}/s)({}/{}msec){}\n", DirectionName(dir),
      FioNumber(f.iops, FioUnits::kCount), FioNumber(f.bw_bytes, FioUnits::kBinaryBytes),
      FioNumber(f.bw_bytes, FioUnits::kDecimalBytes),
      FioNumber(static_cast<double>(d.bytes), FioUnits::kBinaryBytes), runtime_ms,
      dir == Direction::kWrite ? fmt::format("; {} zone resets", job.zone_resets) : std::string());
  // Rate-limited: iotail's olat (from the intended start) after fio's three, with percentiles of
  // its own after clat's.
  const bool sched = f.olat_pct.size() == s.percentiles.size();
  TextLatency(o, "slat", d.slat, "");
  TextLatency(o, "clat", d.clat, sched ? "  (issue to completion)" : "");
  if (!job.no_total_latency) {
    TextLatency(o, " lat", d.TotalLatency(), sched ? "  (start to completion)" : "");
  }
  TextLatency(o, "olat", d.olat, "  (iotail's open loop: intended start to completion)");
  TextPrioLatencyLines(out, d);
  TextPercentiles(out, "clat", s.percentiles, f.pct);
  if (sched) TextPercentiles(out, "olat", s.percentiles, f.olat_pct);
  TextPrioPercentiles(out, d, s.percentiles);
  TextRateSampleLines(out, job.samples, di, GroupBandwidthKib(s, job.groupid, di));
  if (f.has_slc) {
    fmt::format_to(
        o,
        "    SLC1={} SLC2={} (means {:.3f}, {:.3f}){}: how far the tail stretches beyond "
        "the median (0: flat; SBK's latency-spread factors)\n",
        f.slc.slc1, f.slc.slc2, f.slc.slc1_mean, f.slc.slc2_mean, sched ? " of clat" : "");
  }
}

// Achieved against target for one rate (IOPS or bytes/s); `what` names it.
struct RateCheck {
  std::string what;  // "IOPS", "read IOPS", "bytes/s", ...
  double target = 0, achieved = 0;
  double ErrorPct() const { return target > 0 ? (achieved / target - 1) * 100 : 0; }
};

std::vector<RateCheck> RateChecks(const RunSummary& s, const RecorderSnapshot& all) {
  std::vector<RateCheck> out;
  if (!s.mode.rate_limited || s.runtime_s <= 0) return out;
  uint64_t ios = 0, bytes = 0;
  for (const auto& d : all.dirs) {
    ios += d.ios;
    bytes += d.bytes;
  }
  if (s.mode.target_iops > 0) out.push_back({"IOPS", s.mode.target_iops, ios / s.runtime_s});
  if (s.mode.target_bw > 0) out.push_back({"bytes/s", s.mode.target_bw, bytes / s.runtime_s});
  for (int d = 0; d < kDirectionCount; ++d) {
    const std::string name(DirectionName(static_cast<Direction>(d)));
    if (s.mode.dir_target_iops[d] > 0) {
      out.push_back({name + " IOPS", s.mode.dir_target_iops[d], all.dirs[d].ios / s.runtime_s});
    }
    if (s.mode.dir_target_bw[d] > 0) {
      out.push_back({name + " bytes/s", s.mode.dir_target_bw[d], all.dirs[d].bytes / s.runtime_s});
    }
  }
  return out;
}

void TextRun(Out o, const RunSummary& s, const RecorderSnapshot& all) {
  if (!s.mode.description.empty()) fmt::format_to(o, "  mode: {}\n", s.mode.description);
  for (const RateCheck& r : RateChecks(s, all)) {
    fmt::format_to(o, "  rate: target {:.1f} {}, achieved {:.1f} ({:+.3f}%)\n", r.target, r.what,
                   r.achieved, r.ErrorPct());
  }
  if (s.mode.rate_limited) {
    const ScheduleSnapshot& sc = all.schedule;
    fmt::format_to(o,
                   "  schedule: {} I/Os issued, {} late (issued > {} us after their intended "
                   "start), max lag {:.1f} us, mean lag {:.1f} us\n",
                   sc.issued, sc.late, s.mode.late_threshold_ns / 1000,
                   static_cast<double>(sc.max_lag_ns) / 1e3,
                   sc.issued ? static_cast<double>(sc.sum_lag_ns) / sc.issued / 1e3 : 0.0);
  }
  if (s.start_at_ms != 0) {
    fmt::format_to(o, "  start: --start_at={}, started {:.3f} ms after it\n", s.start_at_ms,
                   static_cast<double>(s.start_skew_ns) / 1e6);
  }
  if (!s.ranks.empty()) {
    fmt::format_to(o,
                   "  ranks ({}), clat p99 of each, start skew by its own clock, clock offset "
                   "against rank 0:\n",
                   s.ranks.size());
    for (const RankInfo& r : s.ranks) {
      if (r.lost) {
        fmt::format_to(o,
                       "    rank {} on {}: lost: sent nothing for {:.1f} s; its I/Os are not in "
                       "this summary\n",
                       r.rank, r.host, r.lost_silence_s);
        continue;
      }
      fmt::format_to(o,
                     "    rank {} on {}: {} I/Os, {} bytes, {} errors, p99 {:.1f} us, skew {:.3f} "
                     "ms, offset {:.3f} ms{}\n",
                     r.rank, r.host, r.ios, r.bytes, r.errors, r.p99_ns / 1e3,
                     static_cast<double>(r.start_skew_ns) / 1e6,
                     static_cast<double>(r.clock_offset_ns) / 1e6,
                     RankLatenessText(r.lateness_n, r.lateness_p99_ns, r.lateness_max_ns));
    }
  }
  std::string replay;
  AppendReplayText(replay, s.replay, all, s.runtime_s, s.percentiles);
  fmt::format_to(o, "{}", replay);
  if (!s.interrupted_by.empty()) {
    fmt::format_to(o, "  interrupted by {} after {:.3f} s (in-flight I/Os completed and logged)\n",
                   s.interrupted_by, s.runtime_s);
  }
  if (s.sla != nullptr && !s.sla->empty()) {
    std::ostringstream sla;
    s.sla->WriteSummary(sla, "ms since start (interval start)");
    std::string text = sla.str();
    AppendSlaStageText(text, s.explain);
    size_t start = 0;
    while (start < text.size()) {
      const size_t nl = text.find('\n', start);
      fmt::format_to(o, "  {}\n", text.substr(start, nl - start));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
}

void JsonRun(Out o, const RunSummary& s, const RecorderSnapshot& all) {
  const ScheduleSnapshot& sc = all.schedule;
  fmt::format_to(o, "\"iotail_run\": {{\"mode\": \"{}\", \"description\": \"{}\"",
                 s.mode.rate_limited ? "rate" : "burst", JsonEscape(s.mode.description));
  const BuildIdentity& b = s.build;
  fmt::format_to(o,
                 ", \"build\": {{\"version\": \"{}\", \"commit\": \"{}\", \"tree\": \"{}\", "
                 "\"compiler\": \"{}\", \"features\": \"{}\"}}",
                 JsonEscape(b.version), JsonEscape(b.commit), JsonEscape(b.tree),
                 JsonEscape(b.compiler), JsonEscape(b.features));
  if (s.mode.rate_limited) {
    fmt::format_to(o, ", \"rate_process\": \"{}\", \"rates\": [", s.mode.process);
    const auto checks = RateChecks(s, all);
    for (size_t i = 0; i < checks.size(); ++i) {
      fmt::format_to(o,
                     "{}{{\"what\": \"{}\", \"target\": {:.3f}, \"achieved\": {:.3f}, "
                     "\"error_pct\": {:.6f}}}",
                     i ? ", " : "", checks[i].what, checks[i].target, checks[i].achieved,
                     checks[i].ErrorPct());
    }
    fmt::format_to(o,
                   "], \"issued\": {}, \"late_ios\": {}, \"late_threshold_ns\": {}, "
                   "\"max_lag_ns\": {}, \"mean_lag_ns\": {:.1f}",
                   sc.issued, sc.late, s.mode.late_threshold_ns, sc.max_lag_ns,
                   sc.issued ? static_cast<double>(sc.sum_lag_ns) / sc.issued : 0.0);
  }
  fmt::format_to(o, ", \"interrupted\": {}, \"signal\": {}",
                 s.interrupted_by.empty() ? "false" : "true",
                 s.interrupted_by.empty() ? "null" : "\"" + s.interrupted_by + "\"");
  if (s.start_at_ms != 0) {
    fmt::format_to(o, ", \"start_at_ms\": {}, \"start_skew_ms\": {:.3f}", s.start_at_ms,
                   static_cast<double>(s.start_skew_ns) / 1e6);
  }
  if (!s.ranks.empty()) {
    fmt::format_to(o, ", \"ranks\": [");
    for (size_t i = 0; i < s.ranks.size(); ++i) {
      const RankInfo& r = s.ranks[i];
      fmt::format_to(
          o,
          "{}{{\"rank\": {}, \"host\": \"{}\", \"start_skew_ns\": {}, "
          "\"clock_offset_ns\": {}, \"ios\": {}, \"bytes\": {}, \"errors\": {}, "
          "\"p99\": {}{}{}}}",
          i ? ", " : "", r.rank, JsonEscape(r.host), r.start_skew_ns, r.clock_offset_ns, r.ios,
          r.bytes, r.errors, std::isfinite(r.p99_ns) ? fmt::format("{:.0f}", r.p99_ns) : "null",
          RankLatenessJson(r.lateness_n, r.lateness_p99_ns, r.lateness_max_ns),
          r.lost ? fmt::format(", \"lost\": true, \"lost_silence_s\": {:.1f}", r.lost_silence_s)
                 : std::string());
    }
    fmt::format_to(o, "]");
  }
  if (s.explain.asked) {
    std::string explain;
    AppendExplainNoteJson(explain, s.explain);
    fmt::format_to(o, ", {}", explain);
  }
  fmt::format_to(o, "}}");
  std::string replay;
  AppendReplayJson(replay, s.replay, all, s.runtime_s, s.percentiles, s.json_bins);
  fmt::format_to(o, "{}", replay);
  if (s.sla != nullptr && !s.sla->empty()) {
    std::ostringstream sla;
    s.sla->WriteJson(sla);
    fmt::format_to(o, ",\n\"iotail_sla\": {}", sla.str());
  }
}

}  // namespace

std::string FormatJsonSummary(const RunSummary& s) {
  std::string out;
  Out o(out);
  const std::string options = JsonOptions(s.options);
  // fio's "time": the start as ctime(3) writes it, without its newline.
  const time_t start = static_cast<time_t>(s.timestamp_s);
  char when[64] = "";
  ctime_r(&start, when);
  std::string time_text(when);
  while (!time_text.empty() && time_text.back() == '\n') time_text.pop_back();
  fmt::format_to(o,
                 "{{\n\"fio version\": \"{}\",\n\"timestamp\": {},\n\"timestamp_ms\": {},\n"
                 "\"time\": \"{}\",\n\"global options\": {},\n",
                 s.version, s.timestamp_s, s.timestamp_ms, time_text, options);
  fmt::format_to(o, "\"jobs\": [\n");
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    JsonJob(o, s.jobs[j], s);
    fmt::format_to(o, "{}\n", j + 1 < s.jobs.size() ? "," : "");
  }
  fmt::format_to(o, "],\n");
  JsonDiskUtil(o, s.disk_util);
  fmt::format_to(o, ",\n\"iotail_aggregate\": ");
  const JobTotals aggregate = AggregateJob(s);
  JsonJob(o, aggregate, s);
  fmt::format_to(o, ",\n");
  JsonRun(o, s, aggregate.totals);
  fmt::format_to(o, "\n}}\n");
  return out;
}

namespace {

// One reported job as fio's show_thread_status_normal prints it, then iotail's error counts.
void TextJob(std::string& out, const JobTotals& job, const RunSummary& s) {
  Out o(out);
  const time_t when = static_cast<time_t>(s.report_time_s != 0 ? s.report_time_s : s.timestamp_s);
  char time_text[64] = "";
  ctime_r(&when, time_text);  // with its newline, as fio prints it
  const int err = FirstErrno(job.totals);
  fmt::format_to(o, "{}: (groupid={}, jobs={}): err={:2}{}: pid={}: {}", job.name, job.groupid,
                 job.members, err,
                 err != 0 ? fmt::format(" (error={})", std::strerror(err)) : std::string(), s.pid,
                 time_text);
  if (!job.description.empty()) fmt::format_to(o, "  Description  : [{}]\n", job.description);
  for (int d = 0; d < kDirectionCount; ++d) TextDirection(out, static_cast<Direction>(d), job, s);
  TextLatencyBuckets(out, job);
  TextSyncLines(out, job.syncs);
  const CpuUsage& cpu = job.cpu;
  fmt::format_to(o, "  cpu          : usr={:.2f}%, sys={:.2f}%, ctx={}, majf={}, minf={}\n",
                 cpu.UsrPct(), cpu.SysPct(), cpu.ctx, cpu.majf, cpu.minf);
  TextDepthLines(out, job);
  if (job.steady_state) TextSteadyStateLine(out, *job.steady_state);
  AppendErrorsText(out, job.totals);
  if (job.explain) AppendExplainText(out, *job.explain);
}

}  // namespace

std::string FormatTextSummary(const RunSummary& s) {
  std::string out;
  Out o(out);
  if (!s.header.empty()) fmt::format_to(o, "{}\n\n", s.header);
  // fio's order: each reported job (clone, or group with group_reporting), then each group's
  // totals, then the disks; iotail's run-wide lines come after everything fio prints.
  for (const JobTotals& job : s.jobs) {
    uint64_t ios = 0;
    for (const DirectionSnapshot& d : job.totals.dirs) ios += d.ios;
    // fio leaves out a job that did no I/O; iotail keeps it when it has errors to show.
    if (ios == 0 && job.totals.TotalErrors() == 0) continue;
    TextJob(out, job, s);
  }
  TextRunStatusGroups(out, s);
  TextDiskStats(out, s.disk_util);
  fmt::format_to(o, "\niotail run:\n");
  TextRun(o, s, AggregateJob(s).totals);
  return out;
}

}  // namespace iotail::stats
