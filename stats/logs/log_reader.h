// LogReader: streams the records of one fio-format histogram log (fio 2 or 3, any coarseness,
// written by fio or by iotail): it finds the lines of a file (or of a byte range of it), has
// LogLineParser (log_line.h) parse and validate each, and makes records of them in file order.
//
// The line format, the layout detection from the first line and every check of a line are the
// parser's: a line it cannot read throws LogFormatError naming the file and line. The reader
// adds the damage of a file: a line longer than any histogram log's is a LogFormatError; a torn
// last line (no newline at end of file, too few fields) is skipped and reported in warnings();
// a CRLF line ending is accepted; empty lines are skipped.
//
// Each record carries the segment it belongs to: a file written with per_job_logs=0 holds several
// jobs one after another, and the time of a direction jumping backwards starts a new segment.
// With undo_client_sums, the alternating-sum corruption of `fio --client` logs is undone per
// segment and direction (true delta d_k = r_k - r_(k-2) from the third record on).
//
// With only_direction set the reader returns the records of one direction and skips the other
// lines cheaply, so that each direction of a file can be streamed on its own, in time order.
//
// The reader reads the file in large blocks; it owns its buffers and is not thread-safe (use one
// reader per thread). A record's counts stay valid until the next call to Next().
//
// A reader need not hold its file open for the whole read: Position() says where it stands
// between two records (a small value), and Open() with that position makes a reader, this one or
// another, carry on from there exactly as the first would have (same records, checks, line
// numbers, segments and client-sum differences). Open() reuses the reader's buffers, so one reader
// per thread can take turns on any number of files while holding one file descriptor at most;
// Close() releases the file and keeps the buffers.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"
#include "stats/logs/log_line.h"
#include "stats/util/large_buffer.h"

namespace iotail::stats {

struct LogReaderOptions {
  // Undo the alternating sums that `fio --client` writes into its logs.
  bool undo_client_sums = false;
  // Read only the bytes [begin_offset, end_offset) of the file; begin_offset must be the start of
  // a line, and first_line its 1-based line number (for messages).
  uint64_t begin_offset = 0;
  uint64_t end_offset = std::numeric_limits<uint64_t>::max();
  uint64_t first_line = 1;
  // begin_offset may fall inside a line: the reader starts at the first line that begins at or
  // after it (for a reader that starts somewhere in a file: first_line is then the number given
  // to that line, for messages).
  bool begin_inside_line = false;
  // Return only the records of this direction; lines of the others are skipped unchecked
  // (beyond their time and ddir fields), for a reader of the other direction to validate.
  std::optional<Direction> only_direction;
  // Size of the read buffer; it grows if a line is longer.
  size_t buffer_size = size_t{4} << 20;
  // For a reader that is expected to stop near this offset: reads go no further past it than
  // kReadPastHint bytes each (the rest of the input is still read, in steps of that size).
  std::optional<uint64_t> read_hint_end;
  static constexpr size_t kReadPastHint = size_t{32} << 10;
};

// Where a LogReader stands between two records, for LogReader::Open to carry on from there. Its
// state is the reader's own; only offset() and line() are meant for the caller. A value type.
class LogReaderPosition {
 public:
  // Byte offset in the file of the next line to read, and the line number of the last one read.
  uint64_t offset() const { return offset_; }
  uint64_t line() const { return line_; }

 private:
  friend class LogReader;
  uint64_t offset_ = 0;
  uint64_t line_ = 0;
  uint64_t bytes_consumed_ = 0;
  // With undo_client_sums: the resumed reader starts `replay_records` records of its direction
  // earlier (at replay_offset_, after line replay_line_) and reads them again without returning
  // them, which rebuilds the raw rows the differences need without keeping them here.
  uint64_t replay_offset_ = 0;
  uint64_t replay_line_ = 0;
  std::optional<HistogramLayout> layout_;
  uint32_t segment_ = 0;
  uint8_t replay_records_ = 0;
  std::optional<int64_t> last_end_ms_[kDirectionCount];
  uint64_t records_[kDirectionCount] = {};
};

struct LogRecord {
  int64_t end_ms = 0;  // time at the end of the interval, ms (relative or Unix epoch)
  Direction direction = Direction::kRead;
  uint64_t block_size = 0;           // fio's `bs` column: meaningless, kept for round trips
  uint64_t line = 0;                 // 1-based line number in the file
  uint64_t offset = 0;               // byte offset in the file of the record's line
  uint32_t segment = 0;              // job index inside a per_job_logs=0 file, from 0
  std::span<const uint64_t> counts;  // layout().size() bucket counts
  // The buckets that may be non-zero, in increasing order (every non-zero one is there; a few
  // zero ones may be too): a sparse view for consumers that skip empty buckets.
  std::span<const uint32_t> nonzero;
};

class LogReader {
 public:
  // A reader without input (Next() returns false) until Open().
  LogReader();
  // Opens the file; throws std::system_error if it cannot be opened.
  explicit LogReader(std::string path, LogReaderOptions options = {});
  // Reads from memory instead of a file (tests, fuzzing); `name` is used in messages.
  static LogReader FromString(std::string name, std::string data, LogReaderOptions options = {});
  ~LogReader();
  LogReader(LogReader&&) noexcept;
  LogReader& operator=(LogReader&&) noexcept;

  // Closes the current input and opens `path` with `options`, at the start of the byte range or,
  // when given, at `position` (which a reader of the same file with the same options returned;
  // begin_offset and first_line are then ignored). Keeps the buffers; clears the warnings.
  // Throws std::system_error if the file cannot be opened.
  void Open(std::string path, LogReaderOptions options,
            const std::optional<LogReaderPosition>& position = std::nullopt);
  // Closes the file (the buffers stay for the next Open()); Next() then returns false.
  void Close();
  // Where the reader stands: Open() at this position reads the records that Next() would return
  // from now on. A reader with undo_client_sums needs only_direction for this (else
  // std::logic_error): its rows are rebuilt by reading its direction's last two records again.
  LogReaderPosition Position() const;

  // Advances to the next record. Returns false at the end of the input.
  // Throws LogFormatError for a line it cannot read.
  bool Next();
  const LogRecord& record() const { return record_; }

  // The layout detected from the first record; nullopt until a record has been read (and for an
  // empty file).
  const std::optional<HistogramLayout>& layout() const { return parser_.layout(); }
  const std::string& path() const { return path_; }
  // Recoverable damage seen so far (a torn last line), one message each.
  const std::vector<std::string>& warnings() const { return warnings_; }
  uint64_t bytes_consumed() const { return bytes_consumed_; }
  // Closes the input and lends its read buffer, which is kept from one Open() to the next:
  // other reads between them may use it (a merger's scan of its files, before its readers open
  // them), so that a thread maps and faults in one buffer, not two. What they leave in it, and
  // how they resize it, is theirs: the next Open() reads over it.
  LargeBuffer& idle_buffer();

 private:
  struct Input;
  LogReader(std::string path, std::unique_ptr<Input> input, LogReaderOptions options);
  bool FinishRecord(uint64_t time, uint64_t ddir);
  bool FillLine(const char** begin, const char** end, bool* has_newline);
  [[noreturn]] void Fail(const std::string& what) const;

  std::string path_;
  std::unique_ptr<Input> input_;
  LogReaderOptions options_;
  LogLineParser parser_;  // the layout and the counts of the line last parsed
  LogRecord record_;
  uint64_t line_ = 0;
  uint64_t bytes_consumed_ = 0;
  uint64_t offset_ = 0;       // file offset of the next unconsumed byte
  uint64_t line_offset_ = 0;  // file offset of the line being parsed
  uint64_t replay_ = 0;       // records still to read again without returning them (Open)
  std::vector<std::string> warnings_;
  // Per direction: last end time in this segment (or nullopt) and, for undo_client_sums, the
  // raw rows of the two previous records (allocated only then, and zeroed for every direction
  // before the first record after Open) and where those records begin ([0] the last one, [1] the
  // one before), for Position().
  struct DirectionState {
    std::optional<int64_t> last_end_ms;
    uint64_t records = 0;
    std::vector<uint64_t> raw_prev1, raw_prev2;
    uint64_t recent_offset[2] = {};
    uint64_t recent_line[2] = {};
  };
  DirectionState directions_[kDirectionCount];
  uint32_t segment_ = 0;
  bool client_rows_zeroed_ = false;  // undo_client_sums: the rows are sized and zeroed
  bool skip_line_ = false;           // begin_inside_line: the first line read is not ours
};

}  // namespace iotail::stats
