// IologReader: fio's iolog, versions 2 and 3, read as a stream of TraceEvents (trace_event.h).
//
// The formats (fio's iolog.c, as fio 3.33 writes and reads them):
//   line 1: "fio version 2 iolog" or "fio version 3 iolog" (version 1 is refused, as fio does);
//   v2: "FILE add|open|close" and "FILE read|write|trim|sync|datasync OFFSET LENGTH", plus
//       "FILE wait MS 0": hold the next I/O until MS milliseconds after the run's start;
//   v3: each line led by a timestamp in microseconds from the start of the logging run
//       ("US FILE ACTION [OFFSET LENGTH]"); "wait" is not allowed (fio ignores it with a
//       message; here it is an error, since a v3 trace that holds one was not written by fio).
// "add" names a file (it becomes a device, devices() in order of first appearance; an I/O on a
// file no "add" named adds it too); "open" and "close" become kOpen/kClose events; v2's wait
// becomes a kWait event whose time_ns is the instant (from the run's start) it holds until.
// v3 times become nanoseconds from the first event; a time earlier than the one before is taken
// as the one before (fio replays it with no delay), and counted in backwards_times().
//
// Streaming: the source is read 64 KiB at a time into a fixed buffer; a line longer than 4096
// bytes (fio's own limit) is an error. Memory is bounded whatever the trace's length; Next
// allocates only when an "add" names a new file. Malformed lines throw TraceFormatError
// "FILE:LINE: what was expected". Not thread-safe.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

class IologReader : public TraceReader {
 public:
  // Reads and checks the version line; throws TraceFormatError if it is not fio's v2 or v3.
  explicit IologReader(std::unique_ptr<ByteSource> source);
  size_t Next(TraceEvent* out, size_t n) override;
  const std::vector<std::string>& devices() const override { return devices_; }
  int version() const { return version_; }
  uint64_t backwards_times() const { return backwards_; }
  // The longest line accepted (fio reads lines with a 4096-byte buffer).
  static constexpr size_t kMaxLine = 4096;

 private:
  // The next line without its newline, or false at the end of the source.
  bool NextLine(std::string_view* line);
  // Parses one line; false when it yields no event (an "add").
  bool ParseLine(std::string_view line, TraceEvent* ev);
  [[noreturn]] void Fail(std::string_view what) const;
  uint32_t DeviceIndex(std::string_view name);

  std::unique_ptr<ByteSource> source_;
  std::vector<std::string> devices_;
  std::unique_ptr<std::array<char, 65536>> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0;
  int version_ = 0;
  bool have_origin_ = false;
  uint64_t origin_us_ = 0;
  uint64_t last_ns_ = 0;
  uint64_t backwards_ = 0;
};

// Whether `head` (the first bytes of a stream) begins with fio's v2 or v3 iolog version line.
bool LooksLikeIolog(std::string_view head);

}  // namespace iotail::engine::replay
