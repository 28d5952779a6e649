// ValueLogSink: the interval sink that writes fio's bandwidth, IOPS and latency logs, windowed as
// fio writes them with log_avg_msec: one line per worker, direction and window,
// `time, value, ddir, 0, 0` (fio 3.33's "time (ms), value, data direction, block size, priority"
// with block size 0, as fio writes them when windowed; with log_offset an offset column before the
// priority, 0 too; with log_prio the priority as 0x0000, fio's format for it), read by fio2gnuplot,
// fio_generate_plots and fiologparser.py.
//
// The windows are the interval clock's (the log period, epoch-aligned like the histogram logs and
// with the same time column), so every worker's and host's lines share their times. Values: bw in
// KiB/s and IOPS over the window's real length (a window the run covered in part has its rate over
// that part), latencies in ns: the mean over the window's I/Os,
// or with max_value the largest, taken from the histogram (the value fio prints for the highest
// non-empty bucket, so within its 1/64 relative width, where fio's is exact). A direction without
// I/O in a window gets no line in it, as in fio, and the run's final window, when shorter than
// period_ms, has latency lines only (stamped at the run's end), as fio writes no bw or IOPS
// sample for less than its averaging time. Files: PREFIX_bw.N.log, PREFIX_iops.N.log,
// PREFIX_slat.N.log, PREFIX_clat.N.log and PREFIX_lat.N.log (N numbered as the histogram logs);
// the slat log has lines only where slat was recorded (asynchronous engines).
//
// The constructor creates (truncates) every file (std::system_error if one cannot be opened);
// OnInterval and Close throw std::system_error on a write failure. Each interval is flushed.
// Used by one thread at a time (see IntervalSink).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/record/interval_sink.h"

namespace iotail::stats {

struct ValueLogSinkOptions {
  std::string bw_prefix;    // PREFIX_bw.N.log ("" = none)
  std::string iops_prefix;  // PREFIX_iops.N.log ("" = none)
  std::string lat_prefix;   // PREFIX_{slat,clat,lat}.N.log ("" = none)
  bool max_value = false;   // log_max_value: the window's largest latency instead of the mean
  bool log_offset = false;  // log_offset: an offset column (0 in a window, as fio's)
  bool log_prio = false;    // log_prio: the priority column as fio's 0x%04x (0 in a window)
  uint32_t period_ms = 0;   // the window (log_avg_msec): a shorter final one has no bw/iops line
  int workers = 1;          // files for this many workers...
  int first_number = 1;     // ...numbered N = first_number .. (fio's thread numbers)
  size_t first_delta = 0;   // the first of them is deltas[first_delta]
};

class ValueLogSink final : public IntervalSink {
 public:
  explicit ValueLogSink(ValueLogSinkOptions options);
  ~ValueLogSink() override;
  ValueLogSink(const ValueLogSink&) = delete;
  ValueLogSink& operator=(const ValueLogSink&) = delete;

  void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) override;
  void Close() override;

  std::vector<std::string> paths() const;

 private:
  enum Kind { kBw, kIops, kSlat, kClat, kLat, kKinds };
  struct File {
    std::string path;
    std::FILE* file = nullptr;
  };
  void Line(File& f, uint64_t time_ms, uint64_t value, Direction d);

  ValueLogSinkOptions options_;
  std::vector<File> files_[kKinds];  // per kind, per worker
  std::string line_;
};

}  // namespace iotail::stats
