// fio 3.33's options that real job files carry and that iotail honours within what it does,
// refusing the rest by name: bwavgtime and iopsavgtime (the period of the bandwidth and IOPS
// samples: iotail's interval window), allrandrepeat, file_service_type (the order iotail already
// takes a job's files in), verify_only (check what an earlier run wrote, without writing), and
// verifysort (deprecated in fio, which warns and ignores it; so does iotail). See
// SettleFioMiscOptions for what each means once the job's files are known.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <ostream>
#include <string>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

namespace {

using enum ValueType;
using stats::UsageError;

const std::vector<OptionDef>& FioMiscRows() {
  static const std::vector<OptionDef> table = {
      {"bwavgtime", kCount,
       [](RunOptions& o, const OptionValue& v) { o.bw_avg_msec = static_cast<uint32_t>(v.number); },
       "ms between bandwidth samples (bw_min/bw_max/bw_mean): iotail's interval window, so it "
       "sets it when --log_avg_msec/--log_hist_msec are not given and must equal them when they "
       "are (not given: the window, --log_hist_msec's default; fio's is 500 ms)",
       "", Also(), Choices(), OptionScope::kJob, 1},
      {"iopsavgtime", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.iops_avg_msec = static_cast<uint32_t>(v.number);
       },
       "ms between IOPS samples (iops_min/...): as --bwavgtime, whose window it must equal", "",
       Also(), Choices(), OptionScope::kJob, 1},
      {"allrandrepeat", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.allrandrepeat = v.number != 0; },
       "1: every random choice repeats run after run, even with --randrepeat=0", "0"},
      Labeled(
          "KIND",
          {"file_service_type", kText,
           [](RunOptions& o, const OptionValue& v) { o.file_service_type = v.text; },
           "how a job with several files picks the next: iotail finishes each file before the next "
           "in "
           "a sequential job (fio's sequential) and draws each random I/O over all of them (fio's "
           "random); other kinds are refused for a job with several files"}),
      {"verify_only", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.verify_only = v.number != 0; },
       "with --verify on a write job: write nothing, read the blocks the job would write and check "
       "them (what an earlier run left; fio also counts the writes it did not do, iotail does not)",
       "0"},
      {"verifysort", kFlag,
       [](RunOptions& o, const OptionValue&) { o.deprecated.emplace_back("verifysort"); },
       "deprecated in fio 3.33, which warns and ignores it: so does iotail", "1",
       Also("verifysort_nr")},
  };
  return table;
}

// fio's file_service_type: KIND[:N] (N: I/Os before the next file) or a skewed kind with its
// parameter (zipf:1.2, pareto:0.5, normal:10, gauss:10).
void CheckFileServiceType(const RunOptions& job) {
  const std::string& given = job.file_service_type;
  if (given.empty()) return;
  const std::string kind = given.substr(0, given.find(':'));
  static const char* const kKinds[] = {"random", "roundrobin", "sequential", "zipf",
                                       "pareto", "normal",     "gauss"};
  if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds)) {
    throw UsageError(fmt::format(
        "--file_service_type: expected random, roundrobin, sequential, zipf, pareto, normal or "
        "gauss (optionally :N or :PARAMETER), got '{}'",
        given));
  }
  const engine::JobSpec& spec = job.spec;
  const size_t files = spec.files_per_clone ? job.nrfiles : spec.filenames.size();
  if (files <= 1) return;  // one file: nothing to pick
  const std::string iotails = spec.IsRandom() ? "random" : "sequential";
  if (given != iotails) {
    throw UsageError(fmt::format(
        "--file_service_type={}: iotail {} the job's {} files ({}'s file_service_type={}); it "
        "cannot pick them as '{}'",
        given,
        spec.IsRandom() ? "draws each random I/O over all of"
                        : "finishes each file before the next of",
        files, "fio", iotails, given));
  }
}

// fio's verify_only: the job's reads in place of its writes, each block checked.
void ApplyVerifyOnly(RunOptions& job) {
  engine::JobSpec& spec = job.spec;
  if (!job.verify_only) return;
  if (spec.verify.kind == engine::VerifyKind::kNone ||
      (spec.rw != engine::RwMode::kWrite && spec.rw != engine::RwMode::kRandWrite)) {
    throw UsageError(
        "--verify_only: a write job (rw=write or randwrite) with --verify (iotail checks what "
        "such a job writes)");
  }
  spec.rw = spec.rw == engine::RwMode::kWrite ? engine::RwMode::kRead : engine::RwMode::kRandRead;
}

}  // namespace

std::span<const OptionDef> FioMiscOptionTable() { return FioMiscRows(); }

void SettleFioMiscOptions(RunOptions& job) {
  CheckFileServiceType(job);
  ApplyVerifyOnly(job);
}

void NoteDeprecated(const std::vector<RunOptions>& jobs, std::ostream& err) {
  bool said = false;
  for (const RunOptions& job : jobs) {
    if (!job.deprecated.empty() && !said) {
      err << fmt::format(
          "iotail run: --{} is deprecated: fio 3.33 warns and ignores it, and so does iotail\n",
          job.deprecated.front());
      said = true;
    }
  }
}

}  // namespace iotail::cli
