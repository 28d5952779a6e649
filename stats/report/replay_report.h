// The replay's report (read_iolog): the trace against what the replay did, and the lateness of
// its I/Os (issue minus the intended time from the trace; Recorder::RecordLateness).
//
// JSON "iotail_replay": {"trace", "trace_ios", "trace_span_ns", "trace_iops", "achieved_iops",
// "issued", "late_ios" (issued > 100 us late), "max_behind_ns", "behind" (whether the replay fell
// behind the trace: its lateness max over 1 ms, or its runtime over the span by more than 2%),
// "lateness_ns": {"min", "max", "mean", "stddev", "N", "percentile": {"99.000000": ns, ...}}},
// percentiles by fio's rule over the recorded histogram layout (as clat_ns's). The text form is
// one block of lines after the run's mode. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stats/record/recorder.h"

namespace iotail::stats {

struct ReplayInfo {
  bool on = false;
  std::string trace;       // the read_iolog file
  uint64_t trace_ios = 0;  // its reads, writes and trims (after replay_skip)
  uint64_t span_ns = 0;    // its last event's time, scaled (0: untimed, paced by completions)
};

void AppendReplayJson(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                      double runtime_s, const std::vector<double>& percentiles);
void AppendReplayText(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                      double runtime_s, const std::vector<double>& percentiles);

}  // namespace iotail::stats
