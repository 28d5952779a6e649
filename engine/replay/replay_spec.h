// ReplaySpec: a job's trace replay options, fio's names and meanings (JobSpec::replay).
//
// read_iolog names the trace (fio iolog v2/v3; engine/replay/open_trace.h tells the format);
// empty: the job does not replay. A ':'-separated list ('\:' a colon in a name) gives the clones
// of numjobs their traces, all on the one clock, as fio 3.33 assigns them (its subjob numbers,
// measured): the first clone replays the first trace, clone k >= 1 the ((numjobs - k) mod n)-th
// (fio numbers the clones after the first from the last). The
// trace decides each I/O's direction, file, offset and length (rw, bs and the pattern's options are
// not used). replay_redirect sends every trace file's I/O to that one target; without it the
// trace's own file names are the targets, in order of first appearance. Offsets are divided by
// replay_scale, then rounded down to a multiple of replay_align (fio's order). replay_time_scale is
// a percentage of the trace's speed (200: twice as fast, its gaps halved; fio's rule).
// replay_no_stall drops the trace's times and v2's waits: the I/Os go as fast as the queue takes
// them (paced by completions, as an untimed v2 trace always is). replay_map (iotail's own) names a
// target per trace file instead. replay_skip leaves out the directions named (fio's bit per
// direction). read_iolog_chunked is accepted: iotail always reads a trace as a stream. write_iolog
// names the file a job's I/Os are logged to, in fio 3.33's version 3 iolog.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace iotail::engine::replay {

// replay_skip's bits (fio's 1 << DDIR_*).
inline constexpr uint32_t kSkipRead = 1u << 0;
inline constexpr uint32_t kSkipWrite = 1u << 1;
inline constexpr uint32_t kSkipSync = 1u << 2;
inline constexpr uint32_t kSkipTrim = 1u << 4;

struct ReplaySpec {
  std::string read_iolog;
  std::string redirect;
  // iotail's replay_map: each trace file (or device) onto a target of its own, one replay in the
  // trace's one time order ("FROM=TO,FROM=TO"; a trace file not named is refused).
  std::vector<std::pair<std::string, std::string>> map;
  uint64_t scale = 1;         // replay_scale (0 is taken as 1, as fio)
  uint64_t align = 0;         // replay_align (bytes; 0: none)
  uint32_t time_scale = 100;  // replay_time_scale, percent
  uint32_t skip = 0;          // replay_skip bits
  bool no_stall = false;
  bool chunked = false;  // read_iolog_chunked (always streamed)
  std::string write_iolog;
  // Settled by the plan from a pass over the trace (cli/replay_plan.h): its I/Os and the span of
  // its times (scaled; 0: untimed), for the report.
  uint64_t trace_ios = 0;
  uint64_t span_ns = 0;
  uint64_t trace_recorded = 0;  // of trace_ios, those with a latency recorded by the trace
  // Settled by the plan: the traces of read_iolog's list, and for each, its files' (devices')
  // indices among the job's targets (empty: trace file d is target d, or all go to a redirect).
  std::vector<std::string> traces;
  std::vector<std::vector<uint32_t>> device_files;
  bool Active() const { return !read_iolog.empty(); }
  // Which of the traces clone `clone` (0-based, of `numjobs`) replays: fio's subjob number (0 for
  // the first clone, numjobs - clone for the others) modulo their count.
  static size_t TraceIndex(uint32_t clone, uint32_t numjobs, size_t count) {
    const uint32_t subjob = clone == 0 ? 0 : numjobs - clone;
    return count == 0 ? 0 : subjob % count;
  }
  const std::string& TraceOf(uint32_t clone, uint32_t numjobs) const {
    return traces.empty() ? read_iolog : traces[TraceIndex(clone, numjobs, traces.size())];
  }
  // Its files' targets (empty: file d is target d).
  std::vector<uint32_t> DeviceFilesOf(uint32_t clone, uint32_t numjobs) const {
    return device_files.empty() ? std::vector<uint32_t>{}
                                : device_files[TraceIndex(clone, numjobs, device_files.size())];
  }
};

}  // namespace iotail::engine::replay
