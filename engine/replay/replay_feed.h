// ReplayFeed: a worker's trace (read_iolog) as the I/Os it issues, with fio's replay options
// applied: each event's target file, offset (replay_scale, then replay_align), skipped directions
// (replay_skip), and intended time (replay_time_scale; none with replay_no_stall or an untimed
// trace, whose I/Os go as the queue frees: paced by completions, as fio).
//
// Bounded read-ahead without allocation on the worker's path: events sit in a fixed ring of
// kRing; Peek refills it from the reader only when it is empty, and TopUp (called by the worker
// when it is about to wait) reads at most kBatch more, so that parsing happens while the worker
// would otherwise sleep. The reader may allocate when a trace names a new file; nothing else does.
// Counts what it gave and skipped. Not thread-safe (the worker's own).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/replay/replay_spec.h"
#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

// What a plan-time pass over the whole trace found (ScanTrace): its files, I/O count and span.
struct TraceSummary {
  std::vector<std::string> devices;
  uint64_t ios = 0;  // reads, writes and trims (after replay_skip)
  uint64_t reads = 0, writes = 0, trims = 0, syncs = 0;
  uint64_t recorded = 0;    // of the I/Os, those with a latency recorded by the trace
  uint64_t max_end = 0;     // the furthest byte an I/O reaches (after replay_scale and _align)
  uint64_t span_ns = 0;     // the last event's time (scaled by replay_time_scale)
  uint32_t max_length = 0;  // the longest I/O, bytes
  bool timed = false;
  // The trace's own rate: ios over span (0 when untimed or a single instant).
  double Iops() const { return span_ns > 0 ? static_cast<double>(ios) * 1e9 / span_ns : 0; }
};

// Reads the whole trace (`path`, or spec.read_iolog) once in bounded memory. Throws as OpenTrace
// and the readers do.
TraceSummary ScanTrace(const ReplaySpec& spec, const std::string& path);
inline TraceSummary ScanTrace(const ReplaySpec& spec) { return ScanTrace(spec, spec.read_iolog); }

class ReplayFeed {
 public:
  // `files`: how many targets the worker has (device d goes to file device_files[d], or d when
  // device_files is empty, or all to 0 with a redirect); a device beyond them throws
  // TraceFormatError when it is met.
  ReplayFeed(std::unique_ptr<TraceReader> reader, const ReplaySpec& spec, uint32_t files,
             std::string trace_name, std::vector<uint32_t> device_files = {});
  static constexpr size_t kRing = 4096;
  static constexpr size_t kBatch = 256;

  // The next event to issue (after skips), or nullptr at the trace's end. Its offset, device
  // (the worker's file index) and time (ns from the replay's start, scaled) are final.
  const TraceEvent* Peek() {
    if (head_ == tail_ && !Fill(kRing)) return nullptr;
    return &ring_[head_ % kRing];
  }
  void Pop() { ++head_; }
  // Reads ahead up to kBatch events if there is room; call before waiting.
  void TopUp() {
    if (!ended_ && tail_ - head_ <= kRing - kBatch) Fill(kBatch);
  }
  // Whether an event's time is to be kept (a timed trace without replay_no_stall).
  bool Timed(const TraceEvent& e) const { return e.timed && !spec_.no_stall; }
  bool ended() const { return ended_ && head_ == tail_; }

 private:
  // Reads up to `want` events into the ring; false when none came (the end).
  bool Fill(size_t want);
  bool Transform(TraceEvent& e) const;

  std::unique_ptr<TraceReader> reader_;
  ReplaySpec spec_;
  uint32_t files_;
  std::string name_;
  std::vector<uint32_t> device_files_;
  std::unique_ptr<std::array<TraceEvent, kRing>> ring_storage_;
  TraceEvent* ring_;
  std::array<TraceEvent, kBatch> scratch_;
  uint64_t head_ = 0, tail_ = 0;
  bool ended_ = false;
};

}  // namespace iotail::engine::replay
