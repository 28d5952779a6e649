// fio's options that iotail accepts and that change nothing in iotail, each saying why: switches
// iotail always behaves as if set (thread, fixedbufs, registerfiles, percentiles), switches that
// turn fio's measurements off (iotail measures anyway and says so, so no figure it reports is left
// unmeasured), and the options of fio's built-in profiles, which fio itself ignores in a job file.
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

namespace {

using enum ValueType;
using stats::UsageError;

// A switch of fio's that turns a measurement off, given on: kept for PlanRun's note (which says
// each name once).
void MeasuredAnyway(RunOptions& o, const OptionValue& v) {
  if (v.number != 0) o.measured_anyway.emplace_back(v.option);
}

const std::vector<OptionDef>& AcceptedRows() {
  static const std::vector<OptionDef> table = {
      {"thread", kFlag, AcceptOnly, "accepted: iotail's workers are always threads", "1"},
      {"fixedbufs", kFlag, AcceptOnly,
       "accepted: io_uring buffers are always registered when possible", "1"},
      {"registerfiles", kFlag, AcceptOnly,
       "accepted: io_uring files are always registered when possible", "1"},
      {"clat_percentiles", kFlag, AcceptOnly, "accepted: clat percentiles are always reported",
       "1"},
      {"lat_percentiles", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.spec.lat_percentiles = v.number != 0; },
       "accepted: lat percentiles are reported when lat is measured (not with cmdprio)", "1"},
      // fio's switches that turn its measurements off: iotail's cost nothing it needs to save, so
      // it measures anyway and says so (no figure in its report is left unmeasured).
      {"gtod_reduce", kFlag, MeasuredAnyway,
       "accepted: iotail measures latencies and bandwidth regardless (a note says so)", "0"},
      {"disable_lat", kFlag, MeasuredAnyway,
       "accepted: iotail measures lat regardless (a note says so)", "0"},
      {"disable_clat", kFlag, MeasuredAnyway,
       "accepted: iotail measures clat regardless (a note says so)", "0"},
      {"disable_slat", kFlag, MeasuredAnyway,
       "accepted: iotail measures slat regardless (a note says so)", "0"},
      {"disable_bw_measurement", kFlag, MeasuredAnyway,
       "accepted: iotail samples bandwidth and IOPS regardless (a note says so)", "0",
       Also("disable_bw")},
      {"clocksource",
       kChoice,
       AcceptOnly,
       "accepted: iotail times with its own clock (the TSC where the kernel trusts it, else "
       "CLOCK_MONOTONIC: the summary's clocksource says which), to the nanosecond",
       "clock_gettime",
       Also(),
       {{"gettimeofday", 0}, {"clock_gettime", 1}, {"cpu", 2}},
       OptionScope::kJob},
      {"trim_verify_zero", kFlag, AcceptOnly,
       "accepted: it checks trimmed blocks with trim_percentage/trim_backlog, which iotail does "
       "not do (alone it changes nothing, as in fio)",
       "1"},
      {"verify_state_save", kFlag,
       [](RunOptions&, const OptionValue& v) {
         if (v.number != 0) {
           throw UsageError(fmt::format(
               "--{}=1: iotail saves no verify state when a job stops in its writes; give 0",
               v.option));
         }
       },
       "0 only: iotail saves no verify state (fio writes one when a job stops in its writes)", "1"},
      {"create_serialize", kFlag, AcceptOnly,
       "accepted: iotail lays each job's files out when its group starts (fio's timing with 0; "
       "with 1 fio lays every job's out before the first group: the same files, unless an earlier "
       "group makes a later one's)",
       "1"},
      // The options of fio's built-in profiles (tiobench, act): fio takes them in any job file and
      // does nothing with them there; so does iotail.
      Labeled("ANY", {"threads", kText, AcceptOnly,
                      "accepted and ignored, as fio (its tiobench profile's)"}),
      Labeled("ANY", {"block", kText, AcceptOnly,
                      "accepted and ignored, as fio (its tiobench profile's)"}),
      Labeled("ANY", {"numruns", kText, AcceptOnly,
                      "accepted and ignored, as fio (its tiobench profile's)"}),
      Labeled("ANY",
              {"dir", kText, AcceptOnly, "accepted and ignored, as fio (its tiobench profile's)"}),
      Labeled("ANY", {"device_names", kText, AcceptOnly,
                      "accepted and ignored, as fio (its act profile's)"}),
      Labeled("ANY",
              {"load", kText, AcceptOnly, "accepted and ignored, as fio (its act profile's)"}),
      Labeled("ANY", {"test_duration", kText, AcceptOnly,
                      "accepted and ignored, as fio (its act profile's)"}),
      Labeled("ANY", {"threads_per_queue", kText, AcceptOnly,
                      "accepted and ignored, as fio (its act profile's)"}),
      Labeled("ANY", {"read_req_num_512_blocks", kText, AcceptOnly,
                      "accepted and ignored, as fio (its act profile's)"}),
      Labeled("ANY", {"large_block_op_kbytes", kText, AcceptOnly,
                      "accepted and ignored, as fio (its act profile's)"}),
      {"prep", kFlag, AcceptOnly, "accepted and ignored, as fio (its act profile's)", "0"},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> AcceptedOptionTable() { return AcceptedRows(); }

}  // namespace iotail::cli
