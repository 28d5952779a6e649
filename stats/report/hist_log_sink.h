// HistLogSink: the interval sink that writes a run's fio histogram logs, one file per worker:
// PREFIX_clat_hist.N.log (issue to completion; N numbers the run's workers from 1 across jobs, as
// fio numbers threads; or PREFIX_recorded_hist.N.log, a replay's recorded latencies) and, when
// asked (the rate-limited mode), also PREFIX_lat_hist.N.log (olat: intended start to completion); a
// worker that recorded no olat writes zero lines. Each closed interval becomes one line per worker
// and logged direction, stamped with the interval's log time, so the files of every worker (and
// host) share their time column and their counts add up to exactly the I/Os completed. The bs
// column holds the interval's mean bytes per I/O (rounded), so that bytes = I/Os x bs with any mix
// of block sizes (fio writes the size of one I/O there, which misleads plots of bssplit jobs). Each
// interval is flushed to the kernel when written, so a killed run loses at most the open interval.
//
// The constructor creates (truncates) every file (std::system_error if one cannot be opened);
// OnInterval and Close throw std::system_error on a write failure. Used by one thread at a time
// (see IntervalSink).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/logs/hist_log_writer.h"
#include "stats/record/interval_sink.h"

namespace iotail::stats {

struct HistLogSinkOptions {
  std::string prefix;  // PREFIX of PREFIX_clat_hist.N.log
  // KIND of PREFIX_KIND_hist.N.log: "clat", or a stage of --explain ("explain_device"), whose
  // histogram a delta carries as its clat, or "recorded" (a replay's recorded latencies).
  std::string kind = "clat";
  // Which latency of each delta's directions the logs hold: clat, or a replay's `recorded` (the
  // trace's own latency of the I/Os issued in the interval).
  LatencySnapshot DirectionSnapshot::*latency = &DirectionSnapshot::clat;
  int workers = 1;                    // files for this many workers...
  int first_number = 1;               // ...numbered N = first_number .. (fio's thread numbers)
  size_t first_delta = 0;             // the first of them is deltas[first_delta] (several jobs)
  int coarseness = 0;                 // log_hist_coarseness 0..6
  int groups = kFio3Groups;           // log_hist_groups 29 or 59 (see stats/logs/hist_log_writer.h)
  std::vector<Direction> directions;  // a line per direction every interval, even when idle
  uint32_t bs = 4096;                 // the bs column of an interval without I/O
  bool lat_logs = false;              // also PREFIX_lat_hist.N.log
  // One file (PREFIX_clat_hist.1.log) of the sum of every delta rather than one per worker: a
  // cluster's log, each delta a job of every rank (workers, first_delta and first_number unused).
  bool sum = false;
};

class HistLogSink final : public IntervalSink {
 public:
  explicit HistLogSink(HistLogSinkOptions options);

  void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) override;
  void Close() override;

  std::vector<std::string> clat_paths() const;
  std::vector<std::string> lat_paths() const;
  // Samples counted in the last bucket of these logs though above it (fio's clamp), all files.
  uint64_t clamped() const;

 private:
  void Write(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas);
  HistLogSinkOptions options_;
  std::vector<std::unique_ptr<HistLogWriter>> clat_;
  std::vector<std::unique_ptr<HistLogWriter>> lat_;
};

}  // namespace iotail::stats
