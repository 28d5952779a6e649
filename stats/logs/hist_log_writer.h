// HistLogWriter: writes fio histogram-log lines (`PREFIX_clat_hist.N.log`) in fio's exact format:
// `time, ddir, bs, c0, c1, ..., cK-1\n`, fields separated by ", ", no trailing separator. The
// counts are per-interval deltas over fio 3's 1856 fine buckets; with coarseness c (0..6) each
// column sums 2^c adjacent fine buckets, giving 1856 >> c columns, as fio's log_hist_coarseness.
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

#include "stats/core/direction.h"

namespace iotail::stats {

// Appends one log line to `out`. `fine_counts` must hold kFio3Buckets counts.
void FormatHistLogLine(fmt::memory_buffer& out, uint64_t time_ms, Direction dir, uint64_t bs,
                       std::span<const uint64_t> fine_counts, int coarseness);

// Appends one log line whose columns are written as given, for logs in another layout (the merged
// log keeps its inputs' layout): `time, ddir, bs, columns[0], ...`. The same format as above.
void FormatHistLogColumns(fmt::memory_buffer& out, int64_t time_ms, Direction dir, uint64_t bs,
                          std::span<const uint64_t> columns);

class HistLogWriter {
 public:
  // Creates (truncates) `path`. Throws std::system_error if it cannot be opened, UsageError if
  // coarseness is outside 0..6.
  HistLogWriter(std::string path, int coarseness);
  ~HistLogWriter();
  HistLogWriter(const HistLogWriter&) = delete;
  HistLogWriter& operator=(const HistLogWriter&) = delete;

  // Writes one line. Throws std::system_error on a write failure.
  void Write(uint64_t time_ms, Direction dir, uint64_t bs, std::span<const uint64_t> fine_counts);
  // Flushes buffered lines to the kernel; Close() also closes the file (idempotent).
  void Flush();
  void Close();

  const std::string& path() const { return path_; }

  // The file name fio uses for worker `job_number` (1-based): PREFIX_clat_hist.N.log.
  static std::string ClatLogPath(const std::string& prefix, int job_number);
  // PREFIX_lat_hist.N.log: intended start to completion (the rate-limited mode), as fio names
  // its total-latency histogram logs.
  static std::string LatLogPath(const std::string& prefix, int job_number);

 private:
  std::string path_;
  int coarseness_;
  std::FILE* file_ = nullptr;
  fmt::memory_buffer line_;
};

}  // namespace iotail::stats
