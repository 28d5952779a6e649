// TraceEvent and TraceReader: what every trace format iotail replays (fio iolog v2/v3, blktrace
// binary dumps) is read into, and the byte stream the readers read from.
//
// Contract:
// - A reader streams: it holds a bounded read-ahead, never the whole trace, so a trace of any
//   length replays in bounded memory. `Next` fills up to `n` events in trace order and returns how
//   many; 0 means the trace has ended.
// - Times are nanoseconds from the trace's first event (`time_ns` of the first event is 0 after the
//   reader subtracts the trace's origin). A format without times (iolog v2) sets `timed` false on
//   every event; the replay then paces by completions, as fio does.
// - Offsets and lengths are bytes. `device` indexes `devices()`: the file names of an iolog, or
//   "MAJOR,MINOR" of a blktrace dump, in order of first appearance (the replay maps each onto a
//   target).
// - `recorded_ns` is the latency the trace recorded for the I/O (blktrace's dispatch to
//   completion), 0 when the trace has none.
// - Damaged input throws `TraceFormatError` naming the file and line (iolog) or byte offset
//   (blktrace) and what was expected; never a crash or a silently skipped record. A reader counts
//   what it drops on purpose (blktrace events that are not I/Os) in `skipped()`.
// Not thread-safe: one reader per replaying thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace iotail::engine::replay {

// kWait (fio iolog v2's "wait"): no I/O; the next I/O is held until time_ns after the replay's
// start (an absolute instant, not a delay), unless replay_no_stall.
enum class TraceOp : uint8_t { kRead, kWrite, kTrim, kSync, kDatasync, kOpen, kClose, kWait };

struct TraceEvent {
  uint64_t time_ns = 0;      // from the trace's first event
  uint64_t offset = 0;       // bytes
  uint64_t recorded_ns = 0;  // the trace's own latency for this I/O, 0 if none
  uint32_t length = 0;       // bytes
  uint32_t device = 0;       // index into TraceReader::devices()
  TraceOp op = TraceOp::kRead;
  bool timed = false;  // time_ns comes from the trace (iolog v3, blktrace)
};

class TraceFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A stream of bytes: a plain file, or a .gz/.zst file decompressed on the fly.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes into buf; returns how many, 0 at the end. Throws std::system_error or
  // TraceFormatError (a damaged compressed stream) naming the file.
  virtual size_t Read(char* buf, size_t n) = 0;
  virtual const std::string& name() const = 0;
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  virtual size_t Next(TraceEvent* out, size_t n) = 0;
  virtual const std::vector<std::string>& devices() const = 0;
  virtual uint64_t skipped() const { return 0; }
};

}  // namespace iotail::engine::replay
