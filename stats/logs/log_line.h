// LogLineParser: parses one line of an fio histogram log, `time, ddir, bs, c0, ..., cK-1`, into
// its three fixed fields and its K bucket counts. It knows nothing of files, offsets, segments or
// directions' histories: LogReader (log_reader.h) finds the lines and makes records of them.
//
// The layout (generation and coarseness) is detected from the column count K of the first line
// parsed, unless it was set; every later line must have the same count. A line is validated as it
// is parsed: a wrong field count, a non-number, a negative or out-of-range value, a time beyond
// kMaxLogTimeMs, counts adding up to more than kMaxIntervalCount, a ddir other than 0/1/2 or the
// 5-field garbage of fio's log_compression throw LogFormatError naming the place the caller gives.
// A torn last line (it ends the input without a newline and has too few fields) is not an error:
// Parse returns a warning for it, and the line is no record.
//
// Most lines are canonical (`n, n, ..., n`: one comma and one space between fields, numbers of at
// most 15 digits) and take a fast path that stores only the non-zero counts; any other line takes
// the careful parse, which accepts the same values and reports every error in the same order.
//
// The parser owns its count buffers (one layout's worth, reused from line to line): the counts of
// a line stay valid until the next Parse(), SetLayout() or Reset(). Not thread-safe: one parser per
// reader.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"

namespace iotail::stats {

// The most I/Os one line of a log may count (10^15: a billion I/Os per second for eleven days);
// more is damage (a LogFormatError), which also keeps sums over thousands of logs far from
// overflowing 64 bits.
inline constexpr uint64_t kMaxIntervalCount = 1'000'000'000'000'000;

// Times beyond this (about 31,700 years in ms) are damage, not a log: rejecting them keeps the
// quantum arithmetic of the aligner far from overflow.
inline constexpr uint64_t kMaxLogTimeMs = 1'000'000'000'000'000;

// Where a line is, for messages: the input's name and the line's 1-based number.
struct LogLinePlace {
  std::string_view path;
  uint64_t line = 0;
};

// How a line ends: only the last line of the input, without a newline, can be torn.
enum class LogLineEnd { kNewline, kEndOfInput };

// The fixed fields of a parsed line, checked: time_ms at most kMaxLogTimeMs, ddir 0, 1 or 2.
struct LogLineFields {
  uint64_t time_ms = 0;
  uint64_t ddir = 0;
  uint64_t block_size = 0;  // fio's `bs` column: meaningless, kept for round trips
};

// What Parse made of a line: a record's fields and counts, or a torn last line to skip.
struct ParsedLogLine {
  LogLineFields fields;      // when torn_warning is empty
  std::string torn_warning;  // a torn last line, ignored: "path:line: torn last line (...)"
};

// The layout of a line of `fields` comma-separated fields (three fixed ones, then one per bucket),
// or nullopt when no layout has that many buckets.
std::optional<HistogramLayout> LayoutOfFieldCount(size_t fields);

// Whether the line (starting at its time field) may be of direction d, from a quick look at its
// ddir field alone: a line whose ddir cannot be read at a glance ("01", a tab) counts as matching,
// so that the full parse reports it, or tells its direction.
bool LogLineMayBeOfDirection(std::string_view line, Direction d);

class LogLineParser {
 public:
  // Forgets the layout: the next line parsed detects it again. Keeps the buffers.
  void Reset() { layout_.reset(); }
  // Sets the layout every line must have (as if detected), with all counts zero.
  void SetLayout(const HistogramLayout& layout);
  // The layout, once detected or set.
  const std::optional<HistogramLayout>& layout() const { return layout_; }

  // Parses one line, without its line ending ('\n', and a '\r' before it, removed by the caller);
  // the line is not blank. Throws LogFormatError naming `place` for a line it cannot read.
  ParsedLogLine Parse(std::string_view line, LogLineEnd end, LogLinePlace place);

  // The counts of the last line parsed (layout()->size() of them); writable, for a reader that
  // turns them into differences (fio --client sums): it may only lower them.
  std::span<uint64_t> counts() { return counts_; }
  // The buckets that may be non-zero, in increasing order: every non-zero one (a few zero ones
  // may be there too).
  std::span<const uint32_t> nonzero() const { return {nonzero_.data(), nonzero_count_}; }

 private:
  std::optional<LogLineFields> ParseCanonical(const char* begin, const char* end,
                                              LogLinePlace place);
  LogLineFields ParseCarefully(const char* begin, const char* end, LogLinePlace place);
  void ClearCounts();

  std::optional<HistogramLayout> layout_;
  std::vector<uint64_t> counts_;
  // nonzero()'s storage: counts_ is zero but at these (a superset of the non-zero ones).
  std::vector<uint32_t> nonzero_;
  size_t nonzero_count_ = 0;
};

}  // namespace iotail::stats
