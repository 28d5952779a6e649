#include "stats/logs/log_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "stats/core/errors.h"

namespace iotail::stats {
namespace {

// No valid line comes close: 1859 fields of at most 20 digits and a separator.
constexpr size_t kMaxLineLength = size_t{1} << 20;
constexpr int kFixedFields = 3;
// Times beyond this (about 31,700 years in ms) are damage, not a log: rejecting them keeps the
// quantum arithmetic of the aligner far from overflow.
constexpr uint64_t kMaxTimeMs = 1'000'000'000'000'000;

std::string Excerpt(const char* begin, const char* end) {
  const char* stop = begin;
  while (stop < end && *stop != ',' && *stop != '\n' && stop - begin < 24) ++stop;
  return std::string(begin, stop);
}

// Whether the line starting at p (its time field) has ddir d; lines whose ddir field cannot be
// read count as matching, so that the full parse reports them.
bool OfDirection(const char* p, const char* end, Direction d) {
  const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
  if (comma == nullptr) return true;
  p = comma + 1;
  while (p < end && *p == ' ') ++p;
  if (p + 1 >= end || *p < '0' || *p > '2' || (p[1] != ',' && p[1] != ' ')) return true;
  return *p - '0' == static_cast<int>(d);
}

// Fast path for the common, canonical line: `n, n, ..., n`, fields separated by one comma and one
// space, no other blanks, at most 15 digits per number (so no overflow). Most fields of a real log
// are "0, ". Parses n fields; the last one must end the line if `last`, else be followed by ", ".
// Returns the position after them, or nullptr on anything else, leaving the line to the careful
// parse, which accepts the same values and reports every error.
//
// Dense (kSparse false): every field is written to out. Sparse: out must be all zeros on entry;
// runs of empty fields (most of a line) are skipped without a store, and the indices of the
// non-zero values are listed in nonzero.
template <bool kSparse>
const char* ParseCanonical(const char* p, const char* end, uint64_t* out, size_t n, bool last,
                           uint64_t* big_sum, uint32_t* nonzero = nullptr,
                           size_t* nonzero_count = nullptr) {
  size_t nz = 0;
  for (size_t i = 0; i < n; ++i) {
    // Runs of empty buckets, five at a time (the compiler turns this memcmp into two loads).
    while (i + 5 < n && end - p >= 15 && std::memcmp(p, "0, 0, 0, 0, 0, ", 15) == 0) {
      if constexpr (!kSparse) std::memset(out + i, 0, 5 * sizeof(uint64_t));
      i += 5;
      p += 15;
    }
    // One digit: "0, " to "9, " (most of the others).
    if (end - p >= 3 && static_cast<unsigned char>(*p) - unsigned{'0'} <= 9 && p[1] == ',' &&
        p[2] == ' ') {
      const uint64_t digit = static_cast<unsigned char>(*p) - unsigned{'0'};
      out[i] = digit;  // a zero on a zero (sparse): cheaper than a branch that mispredicts
      if constexpr (kSparse) {
        nonzero[nz] = static_cast<uint32_t>(i);
        nz += digit != 0;
      }
      p += 3;
      if (last && i + 1 == n) {                      // a trailing field more than expected
        if constexpr (kSparse) *nonzero_count = nz;  // what was written, for the caller to clear
        return nullptr;
      }
      continue;
    }
    const char* start = p;
    uint64_t value = 0;
    for (unsigned digit; p < end && (digit = static_cast<unsigned char>(*p) - unsigned{'0'}) <= 9;
         ++p) {
      value = value * 10 + digit;
    }
    // Values of 15 digits or more are left to the careful parse, which checks them against
    // kMaxIntervalCount; the sum of the others cannot overflow.
    bool ok = p != start && p - start <= 15;
    if (ok) {
      *big_sum += value;
      out[i] = value;
      if constexpr (kSparse) {
        nonzero[nz] = static_cast<uint32_t>(i);
        nz += value != 0;
      }
      if (last && i + 1 == n) {
        if constexpr (kSparse) *nonzero_count = nz;
        return p == end ? p : nullptr;
      }
      ok = end - p >= 2 && p[0] == ',' && p[1] == ' ';
    }
    if (!ok) {
      if constexpr (kSparse) *nonzero_count = nz;
      return nullptr;
    }
    p += 2;
  }
  if constexpr (kSparse) *nonzero_count = nz;
  return p;
}

}  // namespace

struct LogReader::Input {
  int fd = -1;
  std::string data;        // the whole input, when reading from memory
  uint64_t remaining = 0;  // bytes still to read from fd (end_offset - position)
  std::vector<char> buffer;
  size_t pos = 0;  // next unconsumed byte in buffer
  size_t len = 0;  // bytes valid in buffer
  bool eof = true;

  ~Input() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    data.clear();
    remaining = 0;
    pos = len = 0;
    eof = true;
  }
  const char* base() const { return fd >= 0 ? buffer.data() : data.data(); }
};

LogReader::LogReader() : input_(std::make_unique<Input>()) {}

LogReader::LogReader(std::string path, LogReaderOptions options) : LogReader() {
  Open(std::move(path), options);
}

LogReader::LogReader(std::string path, std::unique_ptr<Input> input, LogReaderOptions options)
    : path_(std::move(path)), input_(std::move(input)), options_(options) {
  line_ = options_.first_line - 1;
  offset_ = options_.begin_offset;
}

LogReader LogReader::FromString(std::string name, std::string data, LogReaderOptions options) {
  auto input = std::make_unique<Input>();
  const uint64_t begin = std::min<uint64_t>(options.begin_offset, data.size());
  const uint64_t end = std::min<uint64_t>(options.end_offset, data.size());
  input->data = data.substr(begin, end > begin ? end - begin : 0);
  input->len = input->data.size();
  input->eof = true;
  input->remaining = 0;
  return LogReader(std::move(name), std::move(input), options);
}

void LogReader::Open(std::string path, LogReaderOptions options,
                     const std::optional<LogReaderPosition>& position) {
  Input& in = *input_;
  in.Close();
  path_ = std::move(path);
  options_ = options;
  warnings_.clear();
  record_ = {};
  replay_ = 0;
  for (auto& state : directions_) {
    state.last_end_ms.reset();
    state.records = 0;
  }
  layout_.reset();
  uint64_t offset = options_.begin_offset;
  line_ = options_.first_line - 1;
  bytes_consumed_ = 0;
  segment_ = 0;
  if (position) {
    const LogReaderPosition& p = *position;
    offset = p.offset_;
    line_ = p.line_;
    bytes_consumed_ = p.bytes_consumed_;
    segment_ = p.segment_;
    for (int d = 0; d < kDirectionCount; ++d) {
      directions_[d].last_end_ms = p.last_end_ms_[d];
      directions_[d].records = p.records_[d];
    }
    if (p.layout_) SetLayout(*p.layout_);
    if (p.replay_records_ > 0) {
      if (!options_.only_direction) {
        throw std::logic_error("LogReader::Open: a position that replays needs only_direction");
      }
      // Start at the first record to read again, with its direction's state as it was before
      // it: a fresh segment start for the differences, which the replay then rebuilds.
      DirectionState& state = directions_[DirectionIndex(*options_.only_direction)];
      state.last_end_ms.reset();
      state.records -= p.replay_records_;
      std::fill(state.raw_prev1.begin(), state.raw_prev1.end(), 0);
      std::fill(state.raw_prev2.begin(), state.raw_prev2.end(), 0);
      bytes_consumed_ -= p.offset_ - p.replay_offset_;
      offset = p.replay_offset_;
      line_ = p.replay_line_;
      replay_ = p.replay_records_;
    }
  }
  offset_ = offset;
  in.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in.fd < 0) throw std::system_error(errno, std::generic_category(), "open '" + path_ + "'");
  if (offset > 0 && ::lseek(in.fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    throw std::system_error(errno, std::generic_category(), "seek in '" + path_ + "'");
  }
  in.remaining = options_.end_offset > offset ? options_.end_offset - offset : 0;
  in.eof = false;
  if (in.buffer.size() < std::max<size_t>(options_.buffer_size, 4096)) {
    in.buffer.clear();
    in.buffer.resize(std::max<size_t>(options_.buffer_size, 4096));
  }
  ::posix_fadvise(in.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

void LogReader::Close() { input_->Close(); }

LogReaderPosition LogReader::Position() const {
  LogReaderPosition p;
  p.offset_ = offset_;
  p.line_ = line_;
  p.bytes_consumed_ = bytes_consumed_;
  p.layout_ = layout_;
  p.segment_ = segment_;
  for (int d = 0; d < kDirectionCount; ++d) {
    p.last_end_ms_[d] = directions_[d].last_end_ms;
    p.records_[d] = directions_[d].records;
  }
  if (options_.undo_client_sums) {
    if (!options_.only_direction) {
      throw std::logic_error("LogReader::Position: undo_client_sums needs only_direction");
    }
    const DirectionState& state = directions_[DirectionIndex(*options_.only_direction)];
    const auto replay = static_cast<uint8_t>(std::min<uint64_t>(state.records, 2));
    if (replay > 0) {
      p.replay_records_ = replay;
      p.replay_offset_ = state.recent_offset[replay - 1];
      p.replay_line_ = state.recent_line[replay - 1] - 1;
    }
  }
  return p;
}

void LogReader::SetLayout(const HistogramLayout& layout) {
  layout_ = layout;
  counts_.assign(layout.size(), 0);
  nonzero_.resize(layout.size());
  nonzero_count_ = 0;
  if (options_.undo_client_sums) {
    for (auto& state : directions_) {
      state.raw_prev1.assign(layout.size(), 0);
      state.raw_prev2.assign(layout.size(), 0);
    }
  }
}

LogReader::~LogReader() = default;
LogReader::LogReader(LogReader&&) noexcept = default;
LogReader& LogReader::operator=(LogReader&&) noexcept = default;

void LogReader::Fail(const std::string& what) const { throw LogFormatError(path_, line_, what); }

void LogReader::FailTime(uint64_t time) const {
  Fail(fmt::format("field 1: time {} ms is out of range (at most {})", time, kMaxTimeMs));
}

bool LogReader::FillLine(const char** begin, const char** end, bool* has_newline) {
  Input& in = *input_;
  while (true) {
    const char* base = in.base();
    const void* nl = std::memchr(base + in.pos, '\n', in.len - in.pos);
    if (nl != nullptr) {
      *begin = base + in.pos;
      *end = static_cast<const char*>(nl);
      *has_newline = true;
      const size_t consumed = static_cast<size_t>(*end - *begin) + 1;
      in.pos += consumed;
      bytes_consumed_ += consumed;
      offset_ += consumed;
      return true;
    }
    if (in.eof) {
      if (in.pos == in.len) return false;
      *begin = base + in.pos;
      *end = base + in.len;
      *has_newline = false;
      bytes_consumed_ += in.len - in.pos;
      offset_ += in.len - in.pos;
      in.pos = in.len;
      return true;
    }
    // Keep the partial line, refill the rest of the buffer.
    if (in.pos > 0) {
      std::memmove(in.buffer.data(), in.buffer.data() + in.pos, in.len - in.pos);
      in.len -= in.pos;
      in.pos = 0;
    }
    if (in.len == in.buffer.size()) {
      if (in.buffer.size() >= 2 * kMaxLineLength) {
        ++line_;
        Fail(fmt::format("line longer than {} bytes: not a histogram log", kMaxLineLength));
      }
      in.buffer.resize(in.buffer.size() * 2);
    }
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(in.buffer.size() - in.len, in.remaining));
    ssize_t got = 0;
    if (want > 0) {
      do {
        got = ::read(in.fd, in.buffer.data() + in.len, want);
      } while (got < 0 && errno == EINTR);
      if (got < 0) throw std::system_error(errno, std::generic_category(), "read '" + path_ + "'");
    }
    if (got == 0) in.eof = true;
    in.len += static_cast<size_t>(got);
    in.remaining -= static_cast<uint64_t>(got);
  }
}

bool LogReader::Next() {
  const char* begin;
  const char* end;
  bool has_newline;
  while (true) {
    line_offset_ = offset_;
    if (!FillLine(&begin, &end, &has_newline)) return false;
    ++line_;
    if (end > begin && end[-1] == '\r') --end;
    // Skip empty (or all-blank) lines.
    const char* p = begin;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p == end) continue;
    if (options_.only_direction && !OfDirection(p, end, *options_.only_direction)) continue;
    if (!ParseLine(begin, end, !has_newline)) continue;
    if (replay_ > 0) {
      --replay_;  // read again only to rebuild the state (Open at a position)
      continue;
    }
    return true;
  }
}

// The canonical fast path (the layout known): one pass, no field count first. Returns what
// ParseLine returns, or nullopt for anything unusual (blanks, a wrong field count, a non-number,
// a huge number), which the careful parse then takes, so values, errors and their order stay
// the same.
std::optional<bool> LogReader::ParseCanonicalLine(const char* begin, const char* end) {
  uint64_t fixed[kFixedFields];
  uint64_t fixed_sum = 0, sum = 0;
  const char* p = ParseCanonical<false>(begin, end, fixed, kFixedFields, false, &fixed_sum);
  if (p == nullptr) return std::nullopt;
  ClearCounts();
  const bool parsed = ParseCanonical<true>(p, end, counts_.data(), counts_.size(), true, &sum,
                                           nonzero_.data(), &nonzero_count_) != nullptr;
  if (!parsed || sum + 9 * counts_.size() > kMaxIntervalCount) {
    ClearCounts();        // the careful parse writes every count
    return std::nullopt;  // the careful parse checks (and names) a count too large
  }
  if (fixed[0] > kMaxTimeMs) FailTime(fixed[0]);
  if (fixed[1] > 2)
    Fail(fmt::format("field 2: ddir {} is not 0 (read), 1 (write) or 2 (trim)", fixed[1]));
  record_.block_size = fixed[2];
  return FinishRecord(fixed[0], fixed[1]);
}

// counts_ is zero but where nonzero_ lists (the canonical parse writes only non-zero counts).
void LogReader::ClearCounts() {
  for (size_t j = 0; j < nonzero_count_; ++j) counts_[nonzero_[j]] = 0;
  nonzero_count_ = 0;
}

// Parses one line into record_; returns false when a torn last line was skipped.
bool LogReader::ParseLine(const char* begin, const char* end, bool last_without_newline) {
  // Once the layout is known, most lines take the canonical fast path.
  if (layout_) {
    if (const std::optional<bool> parsed = ParseCanonicalLine(begin, end)) return *parsed;
  }
  // Count fields first: cheap (one vectorised pass; a memchr per comma cost more than the parse
  // on a first line, mostly commas) and lets every error name the real count.
  const size_t fields = 1 + static_cast<size_t>(std::count(begin, end, ','));
  if (!layout_) {
    const auto layout = fields > kFixedFields
                            ? HistogramLayout::FromColumnCount(fields - kFixedFields)
                            : std::nullopt;
    if (!layout) {
      if (last_without_newline) {
        warnings_.push_back(
            fmt::format("{}:{}: torn last line ({} fields) ignored", path_, line_, fields));
        return false;
      }
      if (fields == 5) {
        Fail(
            "5 fields: this looks like a compressed (log_compression) or non-histogram fio log, "
            "not a histogram log");
      }
      Fail(
          fmt::format("{} fields: not a fio histogram log (expected 3 + 1856, 928, 464, 232, 116, "
                      "58 or 29 columns for fio 3, 3 + 1216 >> c for fio 2, or 3 + 3776 >> c for "
                      "iotail's wide --log_hist_groups=59 logs)",
                      fields));
    }
    SetLayout(*layout);
    // The first line too (a merge of thousands of small logs reads thousands of first lines).
    if (const std::optional<bool> parsed = ParseCanonicalLine(begin, end)) return *parsed;
  }
  const size_t expected = layout_->size() + kFixedFields;
  if (fields != expected) {
    if (last_without_newline && fields < expected) {
      warnings_.push_back(fmt::format("{}:{}: torn last line ({} of {} fields) ignored", path_,
                                      line_, fields, expected));
      return false;
    }
    Fail(fmt::format("{} fields, expected {} as on the first line ({})", fields, expected,
                     layout_->Describe()));
  }

  const char* p = begin;
  size_t field = 0;
  auto parse = [&]() -> uint64_t {
    ++field;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* start = p;
    uint64_t value = 0;
    while (p < end) {
      const unsigned digit = static_cast<unsigned char>(*p) - unsigned{'0'};
      if (digit > 9) break;
      if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
          __builtin_add_overflow(value, uint64_t{digit}, &value)) {
        Fail(fmt::format("field {}: number '{}' is out of range", field, Excerpt(start, end)));
      }
      ++p;
    }
    if (p == start) {
      if (p < end && *p == '-')
        Fail(fmt::format("field {}: negative value '{}'", field, Excerpt(start, end)));
      Fail(fmt::format("field {}: expected a non-negative integer, got '{}'", field,
                       Excerpt(start, end)));
    }
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p < end) {
      if (*p != ',') {
        Fail(fmt::format("field {}: expected a non-negative integer, got '{}'", field,
                         Excerpt(start, end)));
      }
      ++p;
    }
    return value;
  };

  const uint64_t time = parse();
  if (time > kMaxTimeMs) FailTime(time);
  const uint64_t ddir = parse();
  if (ddir > 2) Fail(fmt::format("field 2: ddir {} is not 0 (read), 1 (write) or 2 (trim)", ddir));
  record_.block_size = parse();
  uint64_t total = 0;
  ClearCounts();
  for (size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] = parse();
    nonzero_[nonzero_count_] = static_cast<uint32_t>(i);
    nonzero_count_ += counts_[i] != 0;
    if (__builtin_add_overflow(total, counts_[i], &total) || total > kMaxIntervalCount) {
      Fail(fmt::format(
          "the counts add up to more than {} I/Os in one interval (past bucket {}): more than "
          "any device completes; the log is damaged",
          kMaxIntervalCount, i));
    }
  }
  return FinishRecord(time, ddir);
}

// Fills record_ from a parsed line (time and ddir checked, counts_ and block size set).
bool LogReader::FinishRecord(uint64_t time, uint64_t ddir) {
  // Next()'s quick filter passes the lines whose ddir it cannot read at a glance ("01", a tab);
  // once parsed, a valid line of another direction is that direction's reader's, not ours.
  if (options_.only_direction && ddir != static_cast<uint64_t>(*options_.only_direction)) {
    return false;
  }
  record_.end_ms = static_cast<int64_t>(time);
  record_.direction = static_cast<Direction>(ddir);
  record_.line = line_;

  DirectionState* state = &directions_[ddir];
  bool back = false;
  for (const auto& s : directions_)
    back = back || (s.last_end_ms && record_.end_ms < *s.last_end_ms);
  if (back) {
    // Time jumped back below the latest time of any direction (a job's times never decrease):
    // the next job of a per_job_logs=0 file, whichever direction its first line has.
    ++segment_;
    for (auto& s : directions_) {
      s.last_end_ms.reset();
      s.records = 0;
    }
  }
  state->last_end_ms = record_.end_ms;
  record_.segment = segment_;
  ++state->records;

  if (options_.undo_client_sums) {
    state->recent_offset[1] = state->recent_offset[0];
    state->recent_line[1] = state->recent_line[0];
    state->recent_offset[0] = line_offset_;
    state->recent_line[0] = line_;
    // Line k holds d_k + d_(k-2) + ...; so d_k = r_k - r_(k-2) from the third record on.
    for (size_t i = 0; i < counts_.size(); ++i) {
      const uint64_t raw = counts_[i];
      if (state->records >= 3) {
        if (raw < state->raw_prev2[i]) {
          Fail(
              fmt::format("bucket {}: count {} is below {} two records earlier: not the "
                          "alternating sums of an fio --client log",
                          i, raw, state->raw_prev2[i]));
        }
        counts_[i] = raw - state->raw_prev2[i];
      }
      state->raw_prev2[i] = state->raw_prev1[i];
      state->raw_prev1[i] = raw;
    }
  }
  record_.counts = counts_;
  record_.nonzero = std::span<const uint32_t>(nonzero_.data(), nonzero_count_);
  return true;
}

}  // namespace iotail::stats
