// ScanLogSegments: a quick pass over a histogram log that finds its segments (the jobs of a
// per_job_logs=0 file, each starting where a direction's time jumps back) and, for each, the
// byte range, first line number, first two distinct end times and last end time. It reads only the
// first two fields of each line; LogReader validates everything when the segment is read. Used to
// turn one file into independent time-ordered sources so that merging stays streaming. The scan
// also rejects what no log can hold, naming the file and line (LogFormatError): a line longer than
// 1 MiB (fio's longest is about 40 KB), a time that jumps forward by more than kMaxRecordGapMs (or
// kMaxRecordGapPeriods periods) within a direction, and, in a Unix-epoch log, a time that jumps
// back to before the log's first record (less a few periods): that is a damaged time, not the next
// job of a per_job_logs=0 file, whose times start where the first job's did. An input that is not a
// regular file (a device, FIFO or socket) is a UsageError. Free function; thread-safe. Throws
// std::system_error if the file cannot be read. The file is open only during the call.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats/core/histogram_layout.h"
#include "stats/util/large_buffer.h"

namespace iotail::stats {

// End times at or above this are Unix-epoch milliseconds (1973-03-03); below, ms since job start.
inline constexpr int64_t kEpochThresholdMs = 100'000'000'000;

constexpr bool IsEpochTime(int64_t ms) { return ms >= kEpochThresholdMs; }

// The longest gap between two records of one direction that a log may hold: a day, or 100,000 log
// periods when that is longer. More is a damaged time, which would otherwise make a merge walk
// millions of empty quanta (a 29-day gap took a minute at 1 s quanta).
inline constexpr int64_t kMaxRecordGapMs = int64_t{24} * 3600 * 1000;
inline constexpr int64_t kMaxRecordGapPeriods = 100'000;
// The scan rejects a line of this many bytes or more: no histogram log has one.
inline constexpr size_t kMaxScanLine = size_t{1} << 20;

struct LogSegment {
  uint64_t begin_offset = 0;
  uint64_t end_offset = 0;
  uint64_t first_line = 1;
  int64_t first_end_ms = 0;
  // first_end_ms plus the log period, the spacing of the first two distinct end times of one
  // direction (the smallest over directions); without one, the first end time greater than
  // first_end_ms.
  std::optional<int64_t> second_end_ms;
  uint8_t directions = 0;  // bit d set when a line of ddir d was seen
  // The latest readable end time in the segment (first_end_ms when it has one record).
  int64_t last_end_ms = 0;
};

// Segments of the file in order; an empty vector for a file without records. Lines it cannot
// make sense of are left for LogReader to report.
std::vector<LogSegment> ScanLogSegments(const std::string& path);
// The same, reading through `buffer` (made 128 KiB, more for a longer line), for a thread that
// scans many files: it then maps it (a huge page) once, not once per file.
std::vector<LogSegment> ScanLogSegments(const std::string& path, LargeBuffer& buffer);

// The longest gap a log may hold between two records of one direction, given its period.
int64_t MaxRecordGapMs(const std::optional<int64_t>& period_ms);

// The newlines in bytes [begin, end) of the file (fewer if it is shorter): the line number of a
// line that starts at `end` is the one at `begin` plus this. Throws std::system_error.
uint64_t CountNewlines(const std::string& path, uint64_t begin, uint64_t end);

// GuessLogSegment: what a scan would most likely find in a large file, from its first and last
// blocks (kGuessBlock each) only: one segment, with the first block's first end times, period and
// directions, and the latest time of the last block as its last end time. nullopt when those
// blocks cannot settle it (a file under four blocks, a line the scan cannot read, a direction whose
// spacing the first block does not show, a time going back, a time jump, an I/O error): the caller
// then scans. It is a guess: whoever reads the segment must check what the scan would have found
// (no time going back, no direction outside `directions`, no gap beyond MaxRecordGapMs(period_ms),
// no time after last_end_ms, no line the scan rejects) and scan when anything differs.
inline constexpr size_t kGuessBlock = size_t{64} << 10;
struct SegmentGuess {
  LogSegment segment;
  std::optional<int64_t> period_ms;  // the log period the scan would use in its gap checks
  // What a reader of each direction would most likely find first (also a guess, to be checked
  // by the reader): the end time and line number of the direction's first line, and the layout
  // that the file's first line's field count gives (nullopt: none does, and nothing is guessed).
  struct FirstRecord {
    int64_t end_ms = 0;
    uint64_t line = 0;
  };
  std::array<std::optional<FirstRecord>, 3> first;
  std::optional<HistogramLayout> layout;
};
std::optional<SegmentGuess> GuessLogSegment(const std::string& path, LargeBuffer& buffer);

}  // namespace iotail::stats
