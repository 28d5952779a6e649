#include "stats/logs/log_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "stats/core/errors.h"
#include "stats/util/large_buffer.h"

namespace iotail::stats {
namespace {

// No valid line comes close: 1859 fields of at most 20 digits and a separator.
constexpr size_t kMaxLineLength = size_t{1} << 20;

}  // namespace

struct LogReader::Input {
  int fd = -1;
  std::string data;        // the whole input, when reading from memory
  uint64_t remaining = 0;  // bytes still to read from fd (end_offset - position)
  uint64_t at = 0;         // the file offset of the next byte to read (pread)
  bool seekable = true;    // false: a pipe, read() where it stands (from its start only)
  // The read buffer: fresh anonymous memory, on huge pages where it is large (a page fault per
  // 4 KiB was most of the cost of a reader's first read), not zeroed by us (read() fills what is
  // used). Bytes [0, capacity) are used; the storage may be larger, kept for a later Reserve().
  LargeBuffer storage;
  size_t capacity = 0;
  size_t pos = 0;  // next unconsumed byte in buffer
  size_t len = 0;  // bytes valid in buffer
  bool eof = true;

  ~Input() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    seekable = true;
    data.clear();
    remaining = 0;
    pos = len = 0;
    eof = true;
  }
  char* buffer() const { return storage.bytes(); }
  const char* base() const { return fd >= 0 ? buffer() : data.data(); }
  // Makes the buffer `size` bytes, keeping its first `len` bytes.
  void Reserve(size_t size) {
    if (size > storage.size_bytes()) {
      LargeBuffer bigger = LargeBuffer::Bytes(size);
      if (len > 0) std::memcpy(bigger.bytes(), buffer(), len);
      storage = std::move(bigger);
    }
    capacity = size;
  }
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
  const bool skip = options.begin_inside_line && options.begin_offset > 0;
  if (skip) --options.begin_offset;  // as Open() does
  const uint64_t begin = std::min<uint64_t>(options.begin_offset, data.size());
  const uint64_t end = std::min<uint64_t>(options.end_offset, data.size());
  input->data = data.substr(begin, end > begin ? end - begin : 0);
  input->len = input->data.size();
  input->eof = true;
  input->remaining = 0;
  LogReader reader(std::move(name), std::move(input), options);
  reader.skip_line_ = skip;
  return reader;
}

void LogReader::Open(std::string path, LogReaderOptions options,
                     const std::optional<LogReaderPosition>& position) {
  Input& in = *input_;
  // The same file again (a reader that takes turns on it): its descriptor is kept, and reads say
  // where they read (pread), so reopening costs no system call.
  const bool reuse = in.fd >= 0 && in.seekable && path == path_;
  const int kept = reuse ? std::exchange(in.fd, -1) : -1;
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
  parser_.Reset();
  client_rows_zeroed_ = false;
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
    if (p.layout_) parser_.SetLayout(*p.layout_);
    if (p.replay_records_ > 0) {
      if (!options_.only_direction) {
        throw std::logic_error("LogReader::Open: a position that replays needs only_direction");
      }
      // Start at the first record to read again, with its direction's state as it was before
      // it: a fresh segment start for the differences (the rows are zeroed with the others'
      // before the first record), which the replay then rebuilds.
      DirectionState& state = directions_[DirectionIndex(*options_.only_direction)];
      state.last_end_ms.reset();
      state.records -= p.replay_records_;
      bytes_consumed_ -= p.offset_ - p.replay_offset_;
      offset = p.replay_offset_;
      line_ = p.replay_line_;
      replay_ = p.replay_records_;
    }
  }
  // Inside a line: start a byte early, and skip through the first newline from there (the byte
  // before begin_offset, when begin_offset starts a line).
  skip_line_ = !position && options_.begin_inside_line && offset > 0;
  if (skip_line_) --offset;
  offset_ = offset;
  in.fd = reuse ? kept : ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in.fd < 0) throw std::system_error(errno, std::generic_category(), "open '" + path_ + "'");
  in.at = offset;
  in.remaining = options_.end_offset > offset ? options_.end_offset - offset : 0;
  in.eof = false;
  // The size asked for, in the storage kept from earlier inputs when it is large enough: a
  // reader that reads a few lines asks for a small buffer and reads no more than that at once.
  in.Reserve(std::max<size_t>(options_.buffer_size, 4096));
  if (!reuse) ::posix_fadvise(in.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

void LogReader::Close() {
  input_->Close();
  skip_line_ = false;
}

LogReaderPosition LogReader::Position() const {
  if (skip_line_) {
    throw std::logic_error("LogReader::Position: before the first line of a reader inside a line");
  }
  LogReaderPosition p;
  p.offset_ = offset_;
  p.line_ = line_;
  p.bytes_consumed_ = bytes_consumed_;
  p.layout_ = parser_.layout();
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

LogReader::~LogReader() = default;

LargeBuffer& LogReader::idle_buffer() {
  Close();
  input_->capacity = 0;
  return input_->storage;
}
LogReader::LogReader(LogReader&&) noexcept = default;
LogReader& LogReader::operator=(LogReader&&) noexcept = default;

void LogReader::Fail(const std::string& what) const { throw LogFormatError(path_, line_, what); }

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
      std::memmove(in.buffer(), in.buffer() + in.pos, in.len - in.pos);
      in.len -= in.pos;
      in.pos = 0;
    }
    if (in.len == in.capacity) {
      if (in.capacity >= 2 * kMaxLineLength) {
        ++line_;
        Fail(fmt::format("line longer than {} bytes: not a histogram log", kMaxLineLength));
      }
      in.Reserve(in.capacity * 2);
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(in.capacity - in.len, in.remaining));
    if (options_.read_hint_end) {
      const uint64_t hint = *options_.read_hint_end;
      want = static_cast<size_t>(std::min<uint64_t>(
          want, (hint > in.at ? hint - in.at : 0) + LogReaderOptions::kReadPastHint));
    }
    ssize_t got = 0;
    if (want > 0) {
      while (true) {
        got = in.seekable ? ::pread(in.fd, in.buffer() + in.len, want, static_cast<off_t>(in.at))
                          : ::read(in.fd, in.buffer() + in.len, want);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == ESPIPE && in.seekable) {
          // A pipe: it can be read from where it stands only, its start.
          if (in.at != 0) {
            throw std::system_error(errno, std::generic_category(), "seek in '" + path_ + "'");
          }
          in.seekable = false;
          continue;
        }
        break;
      }
      if (got < 0) throw std::system_error(errno, std::generic_category(), "read '" + path_ + "'");
      in.at += static_cast<uint64_t>(got);
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
  if (skip_line_) {
    skip_line_ = false;
    if (!FillLine(&begin, &end, &has_newline)) return false;
    bytes_consumed_ = 0;  // the next line is the first; the skipped bytes were no line of ours
  }
  while (true) {
    line_offset_ = offset_;
    if (!FillLine(&begin, &end, &has_newline)) return false;
    ++line_;
    if (end > begin && end[-1] == '\r') --end;
    // Skip empty (or all-blank) lines.
    const char* p = begin;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p == end) continue;
    if (options_.only_direction &&
        !LogLineMayBeOfDirection(std::string_view(p, end - p), *options_.only_direction)) {
      continue;
    }
    const ParsedLogLine parsed =
        parser_.Parse(std::string_view(begin, end - begin),
                      has_newline ? LogLineEnd::kNewline : LogLineEnd::kEndOfInput, {path_, line_});
    if (!parsed.torn_warning.empty()) {
      warnings_.push_back(parsed.torn_warning);
      continue;
    }
    record_.block_size = parsed.fields.block_size;
    if (!FinishRecord(parsed.fields.time_ms, parsed.fields.ddir)) continue;
    if (replay_ > 0) {
      --replay_;  // read again only to rebuild the state (Open at a position)
      continue;
    }
    return true;
  }
}

// Fills record_ from a parsed line (time and ddir checked, the parser's counts and the block
// size set): its segment and, with undo_client_sums, the differences. Returns false for a line of
// another direction than only_direction.
bool LogReader::FinishRecord(uint64_t time, uint64_t ddir) {
  // Next()'s quick filter passes the lines whose ddir it cannot read at a glance ("01", a tab);
  // once parsed, a valid line of another direction is that direction's reader's, not ours.
  if (options_.only_direction && ddir != static_cast<uint64_t>(*options_.only_direction)) {
    return false;
  }
  record_.end_ms = static_cast<int64_t>(time);
  record_.direction = static_cast<Direction>(ddir);
  record_.line = line_;
  record_.offset = line_offset_;

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

  const std::span<uint64_t> counts = parser_.counts();
  if (options_.undo_client_sums) {
    if (!client_rows_zeroed_) {
      for (auto& s : directions_) {
        s.raw_prev1.assign(counts.size(), 0);
        s.raw_prev2.assign(counts.size(), 0);
      }
      client_rows_zeroed_ = true;
    }
    state->recent_offset[1] = state->recent_offset[0];
    state->recent_line[1] = state->recent_line[0];
    state->recent_offset[0] = line_offset_;
    state->recent_line[0] = line_;
    // Line k holds d_k + d_(k-2) + ...; so d_k = r_k - r_(k-2) from the third record on.
    for (size_t i = 0; i < counts.size(); ++i) {
      const uint64_t raw = counts[i];
      if (state->records >= 3) {
        if (raw < state->raw_prev2[i]) {
          Fail(
              fmt::format("bucket {}: count {} is below {} two records earlier: not the "
                          "alternating sums of an fio --client log",
                          i, raw, state->raw_prev2[i]));
        }
        counts[i] = raw - state->raw_prev2[i];
      }
      state->raw_prev2[i] = state->raw_prev1[i];
      state->raw_prev1[i] = raw;
    }
  }
  record_.counts = counts;
  record_.nonzero = parser_.nonzero();
  return true;
}

}  // namespace iotail::stats
