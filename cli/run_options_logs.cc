// fio's bandwidth, IOPS and latency logs (stats/report/value_log_sink.h) on `iotail run`:
// --write_bw_log, --write_iops_log, --write_lat_log, --log_avg_msec, --log_max_value. iotail writes
// them windowed, on the interval clock's epoch-aligned windows: --log_avg_msec sets that period
// (and must then agree with an explicit --log_hist_msec); without it the window is the log period,
// where fio (log_avg_msec=0) would write a line per I/O. See SettleLogPeriod.
// Also the run's live metrics endpoint: --prometheus=[ADDR:]PORT and --prometheus_linger=DUR
// (cli/metrics_server.h, stats/report/prometheus_metrics.h).
#include <fmt/format.h>

#include <utility>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/core/sla.h"
#include "stats/util/option_text.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

void ParseOutputFormats(RunSettings& o, const OptionValue& v) {
  static const OptionDef kFormat = {"output_format",
                                    ValueType::kChoice,
                                    nullptr,
                                    "",
                                    "",
                                    {},
                                    {{"normal", OutputFormat::kNormal},
                                     {"json", OutputFormat::kJson},
                                     {"json+", OutputFormat::kJsonPlus},
                                     {"terse", OutputFormat::kTerse}}};
  o.output_formats.clear();
  const std::string args[] = {v.text};
  stats::ForEachListItem(args, ",", [&](std::string_view one, const std::string&) {
    const OptionValue format = ParseOptionValue(kFormat, v.option, std::string(one), v.context);
    o.output_formats.push_back(static_cast<OutputFormat>(format.number));
  });
  o.output_format = o.output_formats.front();
}

using engine::JobSpec;
using enum ValueType;

// A log's prefix: an empty one (a bare write_bw_log in a job file, or write_bw_log=) is the job's
// name, as fio's (make_log_name), set once the job's name is final (NameLogsAfterJobs).
template <std::string engine::LogOptions::*kPrefix>
void LogPrefix(RunOptions& o, const OptionValue& v) {
  o.spec.logs.*kPrefix = v.text;
  std::erase(o.logs_named_after_job, kPrefix);
  if (v.text.empty()) o.logs_named_after_job.push_back(kPrefix);
}

const std::vector<OptionDef>& LogRows() {
  static const std::vector<OptionDef> table = {
      {"status_interval", kMillis, RunField<&RunSettings::status_interval_ms>,
       "a live line every T", "the log period", Also("eta_newline"), Choices(), OptionScope::kRun},
      {"live_format",
       kChoice,
       RunField<&RunSettings::live_format>,
       "live lines on stderr",
       "text",
       Also(),
       {{"text", stats::LiveFormat::kText},
        {"json", stats::LiveFormat::kJson},
        {"none", stats::LiveFormat::kNone}},
       OptionScope::kRun},
      Labeled("DIR:pN<=TIME",
              {"sla", kText,
               [](RunSettings& o, const OptionValue& v) {
                 const std::string args[] = {v.text};
                 (void)stats::ParseSlaTargets(args,
                                              "--sla");  // bad targets fail here, naming --sla
                 o.sla.push_back(v.text);
               },
               "latency target per interval, e.g. read:p99<=2ms (repeatable; exit 3 if broken)", "",
               Also(), Choices(), OptionScope::kRun}),
      Labeled(
          "PREFIX",
          {"write_hist_log", kText, LogPrefix<&LogOptions::write_hist_log>,
           "write PREFIX_clat_hist.N.log histogram logs (bare in a job file: PREFIX is the job's "
           "name)"}),
      Row<kCount, &JobSpec::logs, &LogOptions::hist_msec>(
          "log_hist_msec", "log period in ms, epoch-aligned", "1000"),
      Row<kCount, &JobSpec::logs, &LogOptions::hist_coarseness>(
          "log_hist_coarseness", "0..6: sum 2^c buckets per column", "0"),
      Row<kCount, &JobSpec::logs, &LogOptions::hist_groups>(
          "log_hist_groups",
          "29 or 59 bucket groups per log line (29: fio's, clamped at 17.18 s; 59: every latency "
          "kept)",
          "29"),
      Row<kFlag, &JobSpec::logs, &LogOptions::unix_epoch>("log_unix_epoch",
                                                          "log times as Unix epoch ms"),
      Row<kFlag, &JobSpec::explain, &ExplainOptions::on>(
          "explain",
          "split each I/O's latency into schedule, submit, queue, device and delivery, from the "
          "kernel's block tracepoints (BPF; root); with --write_hist_log also "
          "PREFIX_explain_STAGE_hist.N.log"),
      {"explain_slowest", kCount,
       [](RunOptions& o, const OptionValue& v) {
         if (v.number > 1'000'000) {
           throw UsageError(
               fmt::format("--{}={}: at most 1000000 I/Os per interval", v.option, v.text));
         }
         o.spec.explain.slowest = static_cast<int32_t>(v.number);
       },
       "keep each interval's K slowest I/Os per worker (PREFIX_slowest.N.log with "
       "--write_hist_log; 16 with --explain, 0: none)",
       ""},
      Labeled(
          "FORMAT[,FORMAT]",
          {"output_format", kText, ParseOutputFormats,
           "normal|json|json+|terse, or several: normal,json (json+ adds the latency bins, as fio)",
           "normal", Also(), Choices(), OptionScope::kRun}),
      {"minimal", kFlag,
       [](RunSettings& o, const OptionValue& v) {
         if (v.number == 0) return;
         o.output_formats = {OutputFormat::kTerse};
         o.output_format = OutputFormat::kTerse;
       },
       "fio's terse output (as --output-format=terse)", "0", Also(), Choices(), OptionScope::kRun},
      Labeled("FILE", {"output", kText, RunField<&RunSettings::output>, "write the summary to FILE",
                       "stdout", Also(), Choices(), OptionScope::kRun}),
      Labeled("P[:P...]", {"percentile_list", kText,
                           [](RunOptions& o, const OptionValue& v) {
                             const std::string args[] = {v.text};
                             o.percentiles = stats::ParsePercentileList(args, "--percentile_list");
                           },
                           "percentiles, e.g. 50:99:99.9", "fio's list"}),
      Labeled(
          "PREFIX",
          {"write_bw_log", kText, LogPrefix<&LogOptions::write_bw_log>,
           "fio's bandwidth log PREFIX_bw.N.log (KiB/s per window; bare in a job file: the job's "
           "name)"}),
      Labeled("PREFIX", {"write_iops_log", kText, LogPrefix<&LogOptions::write_iops_log>,
                         "fio's IOPS log PREFIX_iops.N.log (per window)"}),
      Labeled("PREFIX", {"write_lat_log", kText, LogPrefix<&LogOptions::write_lat_log>,
                         "fio's latency logs PREFIX_{slat,clat,lat}.N.log (ns, per window)"}),
      {"log_avg_msec", kCount,
       [](RunOptions& o, const OptionValue& v) {
         if (v.number == 0) {
           throw UsageError(fmt::format(
               "--{}: iotail writes these logs windowed; give a window of 1 ms or more", v.option));
         }
         o.log_avg_msec = static_cast<uint32_t>(v.number);
       },
       "window of the bw/iops/lat logs in ms", "the log period"},
      Row<kFlag, &JobSpec::logs, &LogOptions::max_value>(
          "log_max_value", "latency logs: the window's largest latency instead of its mean"),
      Row<kFlag, &JobSpec::logs, &LogOptions::offset>(
          "log_offset", "bw/iops/lat logs: an offset column (0, as in fio's windowed logs)"),
      Row<kFlag, &JobSpec::logs, &LogOptions::per_job>(
          "per_job_logs",
          "0: one log file per prefix and type (PREFIX_clat_hist.log...), each clone's log "
          "appended to it after its batch, as fio (default 1: PREFIX_TYPE.N.log)"),
      Row<kFlag, &JobSpec::logs, &LogOptions::prio>(
          "log_prio",
          "bw/iops/lat logs: the priority column as fio's 0x0000 (0 in a window, as fio's)"),
      Labeled(
          "[ADDR:]PORT",
          {"prometheus", kText,
           [](RunSettings& o, const OptionValue& v) {
             if (v.text.empty()) throw UsageError("--prometheus: expected [ADDR:]PORT, e.g. 9100");
             o.prometheus = v.text;
           },
           "[ADDR:]PORT: serve Prometheus metrics at /metrics (loopback unless ADDR; 0: any port)",
           "", Also(), Choices(), OptionScope::kRun}),
      {"prometheus_linger", kTime, RunField<&RunSettings::prometheus_linger_ns>,
       "keep serving metrics this long after the run (e.g. 15s)", "0", Also(), Choices(),
       OptionScope::kRun},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> LogOptionTable() { return LogRows(); }

bool IsLogPrefixOption(std::string_view name) {
  return name == "write_bw_log" || name == "write_iops_log" || name == "write_lat_log" ||
         name == "write_hist_log";
}

void NameLogsAfterJob(RunOptions& o) {
  for (std::string engine::LogOptions::*prefix : o.logs_named_after_job) {
    o.spec.logs.*prefix = o.spec.name;
  }
}

std::string SettleLogPeriod(RunOptions& o) {
  engine::JobSpec& spec = o.spec;
  // fio's bwavgtime and iopsavgtime: the period of the bandwidth and IOPS samples, which in
  // iotail are its interval windows: they set the window, or must agree with the one given.
  uint32_t window = o.log_avg_msec != 0        ? o.log_avg_msec
                    : o.Given("log_hist_msec") ? spec.logs.hist_msec
                                               : 0;
  for (const auto& [option, ms] :
       {std::pair{"bwavgtime", o.bw_avg_msec}, std::pair{"iopsavgtime", o.iops_avg_msec}}) {
    if (ms == 0) continue;
    if (window == 0) window = ms;
    if (ms != window) {
      throw UsageError(fmt::format(
          "--{}: {} ms differs from this job's window ({} ms: --log_avg_msec, --log_hist_msec or "
          "--bwavgtime); iotail samples bandwidth and IOPS on that one clock, so give them the "
          "same period",
          option, ms, window));
    }
    spec.logs.hist_msec = ms;
  }
  if (o.log_avg_msec != 0) {
    if (o.Given("log_hist_msec") && !spec.logs.write_hist_log.empty() &&
        spec.logs.hist_msec != o.log_avg_msec) {
      throw UsageError(fmt::format(
          "--log_avg_msec: {} differs from --log_hist_msec={}; iotail closes every log on one "
          "clock, so give them the same period",
          o.log_avg_msec, spec.logs.hist_msec));
    }
    spec.logs.hist_msec = o.log_avg_msec;
    return "";
  }
  if (!spec.logs.HasValueLogs()) return "";
  return fmt::format(
      "iotail run: note: job '{}': fio's bw/iops/lat logs are written windowed, one line per {} ms "
      "(--log_avg_msec={}); iotail does not log each I/O",
      spec.name, spec.logs.hist_msec, spec.logs.hist_msec);
}

}  // namespace iotail::cli
