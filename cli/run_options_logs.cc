// fio's bandwidth, IOPS and latency logs (stats/report/value_log_sink.h) on `iotail run`:
// --write_bw_log, --write_iops_log, --write_lat_log, --log_avg_msec, --log_max_value. iotail writes
// them windowed, on the interval clock's epoch-aligned windows: --log_avg_msec sets that period
// (and must then agree with an explicit --log_hist_msec); without it the window is the log period,
// where fio (log_avg_msec=0) would write a line per I/O. See SettleLogPeriod.
// Also the run's live metrics endpoint: --prometheus=[ADDR:]PORT and --prometheus_linger=DUR
// (cli/metrics_server.h, stats/report/prometheus_metrics.h).
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = {
      {"write_bw_log", kText, JobField<&JobSpec::write_bw_log>,
       "fio's bandwidth log PREFIX_bw.N.log (KiB/s per window)"},
      {"write_iops_log", kText, JobField<&JobSpec::write_iops_log>,
       "fio's IOPS log PREFIX_iops.N.log (per window)"},
      {"write_lat_log", kText, JobField<&JobSpec::write_lat_log>,
       "fio's latency logs PREFIX_{slat,clat,lat}.N.log (ns, per window)"},
      {"log_avg_msec", kCount,
       [](RunOptions& o, const OptionValue& v) {
         if (v.number == 0) {
           throw UsageError(fmt::format(
               "--{}: iotail writes these logs windowed; give a window of 1 ms or more", v.option));
         }
         o.log_avg_msec = static_cast<uint32_t>(v.number);
       },
       "window of the bw/iops/lat logs in ms", "the log period"},
      {"log_max_value", kFlag, JobField<&JobSpec::log_max_value>,
       "latency logs: the window's largest latency instead of its mean", "0"},
      {"prometheus",
       kText,
       [](RunOptions& o, const OptionValue& v) {
         if (v.text.empty()) throw UsageError("--prometheus: expected [ADDR:]PORT, e.g. 9100");
         o.prometheus = v.text;
       },
       "[ADDR:]PORT: serve Prometheus metrics at /metrics (loopback unless ADDR; 0: any port)",
       "",
       {},
       {},
       OptionScope::kRun},
      {"prometheus_linger",
       kTime,
       RunField<&RunOptions::prometheus_linger_ns>,
       "keep serving metrics this long after the run (e.g. 15s)",
       "0",
       {},
       {},
       OptionScope::kRun},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> LogOptionTable() { return Table(); }

std::string SettleLogPeriod(RunOptions& o) {
  engine::JobSpec& spec = o.spec;
  if (o.log_avg_msec != 0) {
    if (o.Given("log_hist_msec") && !spec.write_hist_log.empty() &&
        spec.log_hist_msec != o.log_avg_msec) {
      throw UsageError(fmt::format(
          "--log_avg_msec: {} differs from --log_hist_msec={}; iotail closes every log on one "
          "clock, so give them the same period",
          o.log_avg_msec, spec.log_hist_msec));
    }
    spec.log_hist_msec = o.log_avg_msec;
    return "";
  }
  if (!spec.HasValueLogs()) return "";
  return fmt::format(
      "iotail run: note: job '{}': fio's bw/iops/lat logs are written windowed, one line per {} ms "
      "(--log_avg_msec={}); iotail does not log each I/O",
      spec.name, spec.log_hist_msec, spec.log_hist_msec);
}

}  // namespace iotail::cli
