// fio's options that shape how a job does its I/O beyond what and where: thinktime (stalls),
// fsync/fdatasync every N writes, sync (O_SYNC/O_DSYNC), fadvise_hint and invalidate. See
// engine/job_spec.h for their meanings in the engine.
#include <fcntl.h>
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstring>
#include <string_view>
#include <vector>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"
#include "stats/util/option_text.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's rate_min=N or R,W: N applies to both directions. rate_min and rate_iops_min are fio's two
// settings (JobSpec::Validate refuses both), so each keeps the other's value.
template <bool Bytes>
void ParseRateMin(RunOptions& o, const OptionValue& v) {
  engine::JobSpec parsed;
  ParseRate(v.text, v.option, Bytes, parsed, v.context);
  const std::array<engine::RateLimit, 2> given =
      parsed.rates.limit.Any()
          ? std::array<engine::RateLimit, 2>{parsed.rates.limit, parsed.rates.limit}
          : parsed.rates.dir;
  for (size_t d = 0; d < 2; ++d) {
    if (Bytes) {
      o.spec.rates.min[d].bytes_per_s = given[d].bytes_per_s;
    } else {
      o.spec.rates.min[d].iops = given[d].iops;
    }
  }
}

// fio's ignore_error=READ,WRITE,VERIFY: per error type a ':'-separated list of errno names
// (ENOSPC) or numbers; a list given replaces the type's and continues it.
void ParseIgnoreError(RunOptions& o, const OptionValue& v) {
  size_t type = 0;
  for (const std::string_view list : stats::SplitList(v.text, ',')) {
    if (type == 3)
      throw UsageError(fmt::format("--{}: at most 3 lists (READ,WRITE,VERIFY)", v.option));
    std::vector<int> errors;
    for (const std::string_view name : stats::SplitList(list, ':')) {
      if (name.empty()) continue;
      int err = 0;
      if (name[0] == 'E') {
        for (int e = 1; e < 200 && err == 0; ++e) {
          const char* n = strerrorname_np(e);
          if (n != nullptr && name == n) err = e;
        }
      } else {
        const auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), err);
        if (ec != std::errc() || p != name.data() + name.size() || err <= 0) err = 0;
      }
      if (err == 0) {
        throw UsageError(
            fmt::format("--{}: unknown error '{}' (an errno name such as EIO, or its "
                        "number)",
                        v.option, name));
      }
      errors.push_back(err);
    }
    if (!errors.empty()) {
      o.spec.errors.lists[type] = std::move(errors);
      o.spec.errors.continue_on_error[type] = true;
    }
    ++type;
  }
}

// fio's latency_percentile: one number from 0 to 100 (its FLOAT_LIST of one value).
void ParseLatencyPercentile(RunOptions& o, const OptionValue& v) {
  size_t used = 0;
  const double p = ParseNumber(v.text, v.option, &used);
  if (used != v.text.size() || !(p >= 0 && p <= 100)) {
    throw UsageError(
        fmt::format("--{}: expected a number from 0 to 100, got '{}'", v.option, v.text));
  }
  o.spec.latency_target.percentile = p;
}

using engine::JobSpec;
using enum ValueType;

// The rows of IoBehaviourRows from rate_iops_min on: rate floors, errors, rates.
const std::vector<OptionDef>& RateAndErrorRows() {
  static const std::vector<OptionDef> table = {
      Labeled("IOPS[,IOPS]",
              {"rate_iops_min", kText, ParseRateMin<false>,
               "end the job clone (EIO) when a direction falls below N IOPS (or R,W), checked as "
               "--rate_min"}),
      Row<kCount, &JobSpec::rates, &RateOptions::cycle_ms>(
          "ratecycle",
          "ms over which --rate_min/--rate_iops_min are averaged (at "
          "least; checked at completions)",
          "1000"),
      Row<kTimeUs, &JobSpec::latency_target, &LatencyTargetOptions::target_ns>(
          "latency_target",
          "search for the deepest queue (up to --iodepth) whose total latency stays at or under "
          "this for --latency_percentile of each --latency_window's I/Os, then end after a window "
          "at it, reporting that window (bare = us; 0: off)",
          "0"),
      Row<kTimeUs, &JobSpec::latency_target, &LatencyTargetOptions::window_ns>(
          "latency_window", "the window each depth of the --latency_target search runs (bare = us)",
          "0"),
      Labeled("PCT", {"latency_percentile", kText, ParseLatencyPercentile,
                      "the share (%) of a window's I/Os that must meet --latency_target; at 100 "
                      "one I/O over it "
                      "lowers the depth at once (at depth 1: the job ends, ETIMEDOUT)",
                      "100"}),
      Row<kFlag, &JobSpec::latency_target, &LatencyTargetOptions::run>(
          "latency_run", "keep adjusting the depth to --latency_target for the whole run", "0"),
      Row<kFlag, &JobSpec::files, &FileOptions::invalidate>(
          "invalidate",
          "drop the region's page cache (buffered I/O) at the start and whenever a loop or a "
          "time_based run wraps around it",
          "1"),
      {"continue_on_error",
       kChoice,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.errors.continue_on_error = {(v.number & 1) != 0, (v.number & 2) != 0,
                                            (v.number & 4) != 0};
       },
       "count the errors of these types and keep going, as fio: only those of the type's "
       "--ignore_error list (EIO, EILSEQ unless given); verify: a failed check",
       "none",
       Also(),
       {{"none", 0},
        {"read", 1},
        {"write", 2},
        {"io", 3},
        {"verify", 4},
        {"all", 7},
        {"0", 0},
        {"1", 7}}},
      Labeled(
          "ERRNOS[,ERRNOS[,ERRNOS]]",
          {"ignore_error", kText, ParseIgnoreError,
           "READ,WRITE,VERIFY lists of errnos (ENOSPC:EIO or numbers) that do not stop the job; a "
           "list given continues its type (as fio)"}),
      Row<kFlag, &JobSpec::errors, &ErrorOptions::dump>(
          "error_dump",
          "a line on stderr for every I/O error, also those the job goes on after (0: only the "
          "one that ends it)",
          "0"),
      Labeled("IOPS[,IOPS]", {"rate_iops", kText,
                              [](RunOptions& o, const OptionValue& v) {
                                ParseRate(v.text, v.option, false, o.spec, v.context);
                              },
                              "open loop at N I/Os per second per clone and direction, or R,W"}),
      Labeled("BYTES[,BYTES]",
              {"rate", kText,
               [](RunOptions& o, const OptionValue& v) {
                 ParseRate(v.text, v.option, true, o.spec, v.context);
               },
               "open loop at N bytes per second per clone and direction (1m = 1 MiB/s), or R,W"}),
      Row<kChoice, &JobSpec::rates, &RateOptions::poisson>(
          "rate_process", "spacing of the scheduled I/Os", "linear",
          {{"linear", 0}, {"poisson", 1}}),
      {"io_submit_mode",
       kChoice,
       AcceptOnly,
       "inline|offload: either way a rate-limited job issues each I/O at its scheduled time "
       "whatever the completions (fio's offload; latency from that time) and a burst job submits "
       "from its worker",
       "inline",
       Also(),
       {{"inline", 0}, {"offload", 1}}},
  };
  return table;
}

const std::vector<OptionDef>& IoBehaviourRows() {
  static const std::vector<OptionDef> table = JoinRows(
      {
          Row<kTimeUs, &JobSpec::thinktime, &ThinkTimeOptions::ns>(
              "thinktime", "stall this long after I/Os complete before issuing more (bare = us)",
              "0"),
          Row<kTimeUs, &JobSpec::thinktime, &ThinkTimeOptions::spin_ns>(
              "thinktime_spin", "of the thinktime, spin this long (the rest sleeps; bare = us)",
              "0"),
          Row<kCount, &JobSpec::thinktime, &ThinkTimeOptions::blocks>(
              "thinktime_blocks", "stall after this many I/Os", "1"),
          {"flow", kCount, JobField<&JobSpec::flow, &FlowOptions::weight>,
           "weight of this job's clones among the jobs of its --flow_id: they issue I/Os in "
           "proportion to their weights (0: no flow control)",
           "0", Also(), Choices(), OptionScope::kJob, 0, 1000},
          Row<kCount, &JobSpec::flow, &FlowOptions::id>(
              "flow_id", "the flow this job's --flow weight is in", "0"),
          Row<kTimeUs, &JobSpec::flow, &FlowOptions::sleep_ns>(
              "flow_sleep",
              "a clone held back by its flow sleeps this long once "
              "its I/Os have completed (bare = us; 0: it retries)",
              "0"),
          {"prio", kCount, JobField<&JobSpec::prio, &PrioOptions::ioprio>,
           "I/O priority level of each clone's thread, 0 (highest) to 7 (ioprio_set, as ionice)",
           "", Also(), Choices(), OptionScope::kJob, 0, 7},
          {"prioclass", kCount, JobField<&JobSpec::prio, &PrioOptions::ioprio_class>,
           "I/O priority class of each clone's thread: 1 realtime, 2 best effort, 3 idle", "",
           Also(), Choices(), OptionScope::kJob, 0, 3},
          Row<kCount, &JobSpec::syncs, &SyncOptions::fsync_every>(
              "fsync", "fsync a file after every N writes to it (counted under sync in JSON)", "0"),
          Row<kCount, &JobSpec::syncs, &SyncOptions::fdatasync_every>(
              "fdatasync", "fdatasync a file after every N writes to it", "0"),
          Row<kChoice, &JobSpec::syncs, &SyncOptions::sync_flags>(
              "sync", "open for synchronous writes (sync, 1: O_SYNC; dsync: O_DSYNC)", "none",
              {{"none", 0}, {"0", 0}, {"sync", O_SYNC}, {"1", O_SYNC}, {"dsync", O_DSYNC}}),
          Row<kChoice, &JobSpec::files, &FileOptions::fadvise>(
              "fadvise_hint", "posix_fadvise the targets (1: by rw, random or sequential)", "1",
              {{"1", -2},
               {"0", -1},
               {"sequential", POSIX_FADV_SEQUENTIAL},
               {"random", POSIX_FADV_RANDOM},
               {"normal", POSIX_FADV_NORMAL}}),
          Labeled("BYTES[,BYTES]",
                  {"rate_min", kText, ParseRateMin<true>,
                   "end the job clone (EIO) when a direction falls below N bytes/s "
                   "(or R,W), checked as fio: "
                   "from 2 s after the ramp, over each --ratecycle",
                   "", Also("ratemin")}),
      },
      RateAndErrorRows());

  return table;
}

}  // namespace

std::span<const OptionDef> IoBehaviourOptionTable() { return IoBehaviourRows(); }

}  // namespace iotail::cli
