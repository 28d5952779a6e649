// HistLogWriter: writes fio histogram-log lines (`PREFIX_clat_hist.N.log`) in fio's exact format:
// `time, ddir, bs, c0, c1, ..., cK-1\n`, fields separated by ", ", no trailing separator. The
// counts are per-interval deltas over fine fio 3 buckets (the recorders' wide layout or fio's own).
// A log has G groups (fio's 29 unless --log_hist_groups=59); fine buckets beyond the
// log's last are counted in its last bucket, exactly as fio clamps latencies above its top. With
// coarseness c (0..6) each column sums 2^c adjacent fine buckets: (G * 64) >> c columns, as fio's
// log_hist_coarseness.
//
// Lines are formatted into a reusable char buffer (no iostreams, no allocation per line after the
// first) and written with one stdio call per line into a fully buffered FILE. The writer owns its
// file; not thread-safe (one writer per file, used by the interval clock thread).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"

namespace iotail::stats {

// Appends one log line of `groups` groups to `out`. `fine_counts` holds fine fio 3 buckets, any
// number of them (missing ones count as zero, extra ones go to the last bucket).
void FormatHistLogLine(fmt::memory_buffer& out, uint64_t time_ms, Direction dir, uint64_t bs,
                       std::span<const uint64_t> fine_counts, int coarseness,
                       int groups = kFio3Groups);

// Appends one log line whose columns are written as given, for logs in another layout (the merged
// log keeps its inputs' layout): `time, ddir, bs, columns[0], ...`. The same format as above.
void FormatHistLogColumns(fmt::memory_buffer& out, int64_t time_ms, Direction dir, uint64_t bs,
                          std::span<const uint64_t> columns);

class HistLogWriter {
 public:
  // Creates (truncates) `path`. Throws std::system_error if it cannot be opened, UsageError if
  // coarseness is outside 0..6 or groups neither 29 nor 59.
  HistLogWriter(std::string path, int coarseness, int groups = kFio3Groups);
  ~HistLogWriter();
  HistLogWriter(const HistLogWriter&) = delete;
  HistLogWriter& operator=(const HistLogWriter&) = delete;

  // Writes one line. Throws std::system_error on a write failure.
  void Write(uint64_t time_ms, Direction dir, uint64_t bs, std::span<const uint64_t> fine_counts);
  // Flushes buffered lines to the kernel; Close() also closes the file (idempotent).
  void Flush();
  void Close();

  const std::string& path() const { return path_; }
  // Samples written so far that lay above the log's last bucket and were counted in it (fio's
  // clamp: latencies of 17.18 s and more in a 29-group log).
  uint64_t clamped() const { return clamped_; }

  // The file name fio uses for worker `job_number` (1-based): PREFIX_clat_hist.N.log.
  static std::string ClatLogPath(const std::string& prefix, int job_number);
  // PREFIX_KIND_hist.N.log (KIND: clat, lat, explain_device, ...).
  static std::string LogPath(const std::string& prefix, std::string_view kind, int job_number);
  // PREFIX_lat_hist.N.log: iotail's olat, intended start to completion (the rate-limited mode;
  // fio writes no such log).
  static std::string LatLogPath(const std::string& prefix, int job_number);

 private:
  std::string path_;
  int coarseness_;
  int groups_;
  std::FILE* file_ = nullptr;
  fmt::memory_buffer line_;
  uint64_t clamped_ = 0;
};

}  // namespace iotail::stats
