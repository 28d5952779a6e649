// MergedLogWriter: writes the quanta a Merger streams as one fio-format histogram log (`iotail
// merge`).
//
// One line per quantum and direction present in the input, stamped with the quantum's end (the
// logs' own time base: ms since job start or Unix-epoch ms), bs the quantum's mean bytes per I/O
// (from the inputs' bs columns, see MergedQuantum::bytes; without I/O, the smallest bs of the
// quantum's lines, MergedQuantum::smallest_bs, as iotail's logs write an idle interval's), one
// column per bucket of the merger's layout, in the line format of stats/logs/hist_log_writer.h.
// With MergedDirections::kCombined, one line per quantum adds all directions up, written as ddir 0.
// The merger emits every quantum a record covers, empty ones included, so each line covers exactly
// (previous line, this line]; after a gap (quanta no record covers, not emitted) the line's
// interval is longer than a quantum and a reader takes it as a gap again (RecordStart). Counts
// split over quanta are fractional; each bucket is rounded so that its running total stays the
// rounded running total of the exact counts, which keeps every bucket's whole-run sum exact.
//
// The writer does not own its FILE (a file or stdout); `name` names it in errors. Each line is
// formatted into a reused buffer and written with one stdio call. Not thread-safe: one writer per
// output, fed from the merger's sink.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "stats/analysis/merger.h"
#include "stats/core/direction.h"

namespace iotail::stats {

enum class MergedDirections { kEach, kCombined };

class MergedLogWriter {
 public:
  // Lines of `merger.layout().size()` columns for the directions `merger` holds; `merger` must not
  // be Empty().
  MergedLogWriter(std::FILE* out, std::string name, const Merger& merger,
                  MergedDirections directions);

  // Writes the lines of one quantum. Throws std::system_error on a write failure.
  void Write(const MergedQuantum& quantum);
  // Flushes the FILE. Throws std::system_error on failure.
  void Flush();

 private:
  void WriteLine(int64_t time_ms, Direction dir, std::span<const double> counts, double bytes,
                 double smallest_bs);

  std::FILE* out_;
  std::string name_;
  MergedDirections directions_;
  std::array<bool, kDirectionCount> present_{};
  size_t buckets_;
  // Per output direction: running exact sum and running emitted sum of each bucket.
  struct Running {
    std::vector<double> exact;
    std::vector<uint64_t> emitted;
  };
  std::array<Running, kDirectionCount> running_;
  std::vector<double> combined_;
  std::vector<uint64_t> columns_;
  fmt::memory_buffer line_;
};

}  // namespace iotail::stats
