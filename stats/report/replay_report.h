// The replay's report (read_iolog): the trace against what the replay did, and the lateness of
// its I/Os (issue minus the intended time from the trace; Recorder::RecordLateness).
//
// JSON "iotail_replay": {"trace", "trace_ios", "trace_span_ns", "trace_iops", "achieved_iops",
// "issued", "late_ios" (issued > 100 us late), "max_behind_ns", "behind" (whether the replay fell
// behind the trace: its lateness max over 1 ms, or its runtime over the span by more than 2%),
// "lateness_ns": {"min", "max", "mean", "stddev", "N", "percentile": {"99.000000": ns, ...}}},
// percentiles by fio's rule over the recorded histogram layout (as clat_ns's).
// A trace that records each I/O's latency (blktrace: dispatch to completion, the device's time)
// adds "recorded": {"what", "ios"} and per direction "read"/"write"/"trim": {"recorded_ns":
// {"min", "max", "mean", "stddev", "N", "percentile", and with json+ "bins" as fio's clat_ns}}:
// what `iotail compare --recorded` reads as its A side. The recorded time is the device's alone,
// while the replay's clat is submission to reaping: the text and "what" say so, and name
// --explain's device stage as the like-for-like measure. The text form is one block of lines
// after the run's mode. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stats/record/recorder.h"

namespace iotail::stats {

struct ReplayInfo {
  bool on = false;
  std::string trace;          // the read_iolog file
  uint64_t trace_ios = 0;     // its reads, writes and trims (after replay_skip)
  uint64_t span_ns = 0;       // its last event's time, scaled (0: untimed, paced by completions)
  uint64_t recorded_ios = 0;  // of them, those with a latency recorded by the trace
  bool explain = false;       // the replaying job runs --explain (a device stage is measured)
};

// The meaning of the recorded latency and of what to compare it with (for the summary and
// `iotail compare --recorded`).
inline constexpr const char* kRecordedWhat =
    "the trace's own latency of each I/O: blktrace's dispatch to completion, the device's time";

// `bins`: fio's json+ histogram bins with the recorded latencies' percentiles.
void AppendReplayJson(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                      double runtime_s, const std::vector<double>& percentiles, bool bins);
// One rank's lateness in iotail-mpi's cluster summary (`n` I/Os, their p99 and max): ", lateness
// p99 X us max Y us" and ", \"lateness_p99_ns\": X, \"lateness_max_ns\": Y"; "" when n == 0.
std::string RankLatenessText(uint64_t n, double p99_ns, uint64_t max_ns);
std::string RankLatenessJson(uint64_t n, double p99_ns, uint64_t max_ns);

void AppendReplayText(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                      double runtime_s, const std::vector<double>& percentiles);

}  // namespace iotail::stats
