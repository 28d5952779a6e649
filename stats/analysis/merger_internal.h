// The merger's internals, shared by merger.cc (sources, the run) and merger_window.cc (a window's
// work): what a source keeps between its turns, what a thread reads with, and the reader options
// of a turn. Not part of the API.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "stats/analysis/aligner.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/core/histogram.h"
#include "stats/logs/log_reader.h"

namespace iotail::stats {
namespace merger_internal {

inline constexpr int64_t kNoQuantum = std::numeric_limits<int64_t>::min();
// A thread's read buffer while merging; and while reading first records (one record each, so
// less: the buffer grows if a line is longer).
inline constexpr size_t kReadBuffer = size_t{256} << 10;
inline constexpr size_t kFirstRecordBuffer = size_t{64} << 10;
// Each thread holds at most one file open: this bounds the open files, whatever the input count.
inline constexpr unsigned kMaxThreads = 256;

// A guessed segment is not what the scan would have found (or cannot be used as guessed).
struct GuessFailed {};
// The first window's work split by time failed (an error, a warning, or a file whose lines do not
// allow it cheaply): the run starts again without the split, which reports any error as it is.
struct SplitFailed {};

}  // namespace merger_internal

// One (file, job segment, direction) run of records. Between its turns it holds no file, buffer
// or record: where its next (pending) record begins, and that record's interval.
struct Merger::Source {
  uint32_t file = 0;  // index in files_
  Direction direction = Direction::kRead;
  int shift = 0;         // coarseness of the merge minus the file's
  bool done = false;     // no pending record: all placed
  bool counted = false;  // the pending record is in the totals already (it is read again)
  bool fresh = true;     // no turn has read past the pending first record yet
  int64_t prev_end =
      0;              // end of the record before the pending one (the job start before the first)
  int64_t start = 0;  // the pending record's interval (start, end]: read, not yet all placed
  int64_t end = 0;
  int64_t last_quantum = merger_internal::kNoQuantum;
  int64_t latest_end = std::numeric_limits<int64_t>::min();  // of the records pended so far
  std::optional<int64_t> period_ms;  // the log period (a record's interval after a gap)
  // Gaps seen (see RecordStart): how many, the longest and the line of the record after it.
  uint64_t gaps = 0;
  int64_t longest_gap_ms = 0;
  uint64_t longest_gap_line = 0;

  // The pending record ends at `end`, at `line`: sets its interval, noting a gap (unless not
  // `note_gap`: a record that another reader notes).
  void Pend(int64_t end_ms, uint64_t line, bool note_gap = true) {
    end = end_ms;
    latest_end = std::max(latest_end, end_ms);
    start = RecordStart(prev_end, end, period_ms);
    if (start > prev_end && note_gap) {
      ++gaps;
      if (end - prev_end > longest_gap_ms) {
        longest_gap_ms = end - prev_end;
        longest_gap_line = line;
      }
    }
  }
  // The job segment's bytes in the file, and where the pending record begins.
  uint64_t begin_offset = 0;
  uint64_t end_offset = 0;
  uint64_t first_line = 1;
  LogReaderPosition position;
};

// What a thread reads sources with, one source at a time: its reader (and read buffer), the
// current record in the merge's layout, and its share of the totals.
struct Merger::ThreadReader {
  LogReader reader;
  std::vector<double> counts;  // dense, in the merge's layout (only for a coarser merge: made then)
  // The current record's non-zero buckets (index, count): most buckets of a line are empty, and
  // adding a zero to a window cell changes nothing, so only these are added.
  // Both have layout().size() entries; the first `nonzero` are valid.
  std::vector<uint32_t> nonzero_index;
  std::vector<double> nonzero_count;
  size_t nonzero = 0;
  std::array<Histogram, kDirectionCount> totals;  // integer sums: any order gives the same
  uint64_t records = 0;
  bool unknown_bytes = false;  // a record with bs 0 (see Merger::bytes_known)
  // Per direction: the window quantum whose cell was last prefetched (see Merger::Place).
  std::array<int64_t, kDirectionCount> prefetched{};
  std::vector<std::string> warnings;

  // Sized for a merge of `buckets` buckets, totals zero (those of the directions the input has
  // only). By the thread that uses it, so that the threads fault their pages in in parallel.
  void Prepare(size_t buckets, const std::array<bool, kDirectionCount>& directions) {
    nonzero_index.assign(buckets, 0);
    nonzero_count.assign(buckets, 0.0);
    for (int d = 0; d < kDirectionCount; ++d) {
      if (directions[d]) totals[d].Resize(buckets);
    }
  }

  // total += n, or LogFormatError at r's line: whole-run counts past 2^64 - 1 in one bucket are
  // no device's (a damaged log), and a wrapped total would be a wrong answer.
  void AddToTotal(uint64_t& total, uint64_t n, const LogRecord& r) const {
    if (__builtin_add_overflow(total, n, &total)) {
      throw LogFormatError(reader.path(), r.line,
                           "the counts of one bucket add up past 2^64 - 1 over the run: more I/Os "
                           "than any device completes; the log is damaged");
    }
  }

  // Makes r the current record, in the merge's layout; adds it to the totals when `count` (a
  // record read again, after a turn that ended on it, is counted already).
  void Take(const LogRecord& r, int shift, Direction direction, bool count) {
    auto totals_of = totals[DirectionIndex(direction)].mutable_counts();
    uint32_t* index = nonzero_index.data();
    double* value = nonzero_count.data();
    if (count) ++records;
    if (shift == 0) {
      // The reader's sparse view: only the buckets that may be non-zero.
      const uint64_t* in = r.counts.data();
      size_t n = 0;
      for (const uint32_t i : r.nonzero) {
        if (count) AddToTotal(totals_of[i], in[i], r);
        index[n] = i;
        value[n] = static_cast<double>(in[i]);
        n += in[i] != 0;
      }
      nonzero = n;
      return;
    }
    counts.assign(nonzero_index.size(), 0.0);
    for (size_t i = 0; i < r.counts.size(); ++i) {
      counts[i >> shift] += static_cast<double>(r.counts[i]);
      if (count) AddToTotal(totals_of[i >> shift], r.counts[i], r);
    }
    size_t n = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      index[n] = static_cast<uint32_t>(i);
      value[n] = counts[i];
      n += counts[i] != 0;
    }
    nonzero = n;
  }

  // Ends a source's turn: keeps the reader's warnings, lets the file go.
  void Release() {
    warnings.insert(warnings.end(), reader.warnings().begin(), reader.warnings().end());
    reader.Close();
  }
};

namespace merger_internal {

inline LogReaderOptions ReaderOptions(const MergeOptions& merge, uint64_t begin_offset,
                                      uint64_t end_offset, uint64_t first_line, Direction direction,
                                      size_t buffer_size) {
  LogReaderOptions options;
  options.undo_client_sums = merge.undo_client_sums;
  options.begin_offset = begin_offset;
  options.end_offset = end_offset;
  options.first_line = first_line;
  options.only_direction = direction;
  options.buffer_size = buffer_size;
  return options;
}

}  // namespace merger_internal

}  // namespace iotail::stats
