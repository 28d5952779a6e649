#include "stats/logs/log_scan.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "stats/core/errors.h"
#include "stats/logs/log_line.h"
#include "stats/util/large_buffer.h"

namespace iotail::stats {
namespace {

// Parses a leading unsigned integer (after blanks); nullopt if there is none.
std::optional<uint64_t> LeadingNumber(const char*& p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  const char* start = p;
  uint64_t v = 0;
  while (p < end && *p >= '0' && *p <= '9' && p - start < 19)
    v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  if (p == start) return std::nullopt;
  return v;
}

// The direction whose LogReader (with only_direction) parses a line this scan cannot read: as
// LogReader decides, a lone digit 0..2 after the first comma names the direction; any other line
// is parsed by every reader, so give it to the read one.
unsigned ReaderOfDamagedLine(const char* p, const char* end) {
  const char* comma = static_cast<const char*>(std::memchr(p, ',', static_cast<size_t>(end - p)));
  if (comma == nullptr) return 0;
  p = comma + 1;
  while (p < end && *p == ' ') ++p;
  if (p + 1 >= end || *p < '0' || *p > '2' || (p[1] != ',' && p[1] != ' ')) return 0;
  return static_cast<unsigned>(*p - '0');
}

class SegmentBuilder {
 public:
  explicit SegmentBuilder(const std::string& path) : path_(path) {}

  void Line(const char* begin, const char* end, uint64_t offset, uint64_t line) {
    const char* p = begin;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    if (p == end) return;  // blank: LogReader skips it too
    p = begin;
    const auto time = LeadingNumber(p, end);
    std::optional<uint64_t> ddir;
    if (time) {
      while (p < end && (*p == ' ' || *p == '\t')) ++p;
      if (p < end && *p == ',') ddir = LeadingNumber(++p, end);
    }
    if (!time || !ddir || *ddir > 2) {
      damaged_ = true;
      // A line this scan cannot read: it must still lie inside a segment and be read by one of
      // its readers (the one of its direction when that is readable, else the read one, which
      // takes lines whose ddir it cannot read), so that LogReader reports it with its line.
      if (segments_.empty()) segments_.push_back({offset, 0, line, 0, std::nullopt, 0, 0});
      segments_.back().directions |= static_cast<uint8_t>(1u << ReaderOfDamagedLine(begin, end));
      return;
    }
    const auto t = static_cast<int64_t>(*time);
    auto& last = last_[*ddir];
    // A job's times never decrease, whatever the direction; the next job of a per_job_logs=0 file
    // starts where the time falls below the latest one seen (its first line may be of a direction
    // the previous job never had).
    bool back = false;
    for (const auto& l : last_) back = back || (l && t < *l);
    CheckJump(t, last, back, line);
    if (!file_first_ms_) file_first_ms_ = t;
    if (segments_.empty() || back) {
      if (!segments_.empty()) segments_.back().end_offset = offset;
      segments_.push_back({offset, 0, line, t, std::nullopt, 0, t});
      for (auto& l : last_) l.reset();
      for (auto& f : first_) f.reset();
      period_.reset();
    }
    LogSegment& s = segments_.back();
    if (!timed_ || back) {
      // The first readable time of the segment (it may have begun with an unreadable line).
      s.first_end_ms = t;
      timed_ = true;
    }
    last = t;
    s.last_end_ms = std::max(s.last_end_ms, t);
    // The log period is the spacing of the first two distinct end times of one direction (the
    // smallest over directions): the reads and writes of a job end a few ms apart, so the first
    // two distinct times of the segment say nothing about it. Without any such spacing, fall back
    // to the first time after the first.
    auto& first = first_[*ddir];
    if (!first) {
      first = t;
    } else if (*first != kSpaced && t > *first) {
      if (!period_ || t - *first < *period_) period_ = t - *first;
      first = kSpaced;
    }
    if (period_) {
      s.second_end_ms = s.first_end_ms + *period_;
    } else if (!s.second_end_ms && t > s.first_end_ms) {
      s.second_end_ms = t;
    }
    s.directions |= static_cast<uint8_t>(1u << *ddir);
  }
  // Whether every line so far was readable and every direction seen has its spacing (so that the
  // period cannot change any more).
  bool Settled() const {
    if (damaged_ || segments_.size() != 1 || !timed_) return false;
    for (int d = 0; d < 3; ++d) {
      if (last_[d] && first_[d] != kSpaced) return false;
    }
    return true;
  }
  const std::optional<int64_t>& period() const { return period_; }

  // Damaged times: a forward gap no log holds, or (epoch logs) a fall to before the log began.
  void CheckJump(int64_t t, const std::optional<int64_t>& last, bool back, uint64_t line) const {
    const int64_t max_gap = MaxRecordGapMs(period_);
    if (last && t > *last && t - *last > max_gap) {
      throw LogFormatError(
          path_, line,
          fmt::format("time jumps forward from {} to {} ms ({:.1f} hours after the "
                      "previous record of this direction): a damaged time?",
                      *last, t, static_cast<double>(t - *last) / 3'600'000.0));
    }
    // Relative times: each job of a per_job_logs=0 file counts from its own start, so a new job
    // begins near where the file's first did; a fall to anywhere later is a damaged time, not a
    // job (a record moved back 2 s was taken as a new job).
    if (back && file_first_ms_ && !IsEpochTime(*file_first_ms_)) {
      const int64_t period = period_.value_or(1000);
      const int64_t latest = *file_first_ms_ + std::max<int64_t>(2 * period, 2'000);
      if (t > latest) {
        throw LogFormatError(
            path_, line,
            fmt::format("time goes back to {} ms, not to the log's start ({} ms): a damaged "
                        "time? (only the next job of a per_job_logs=0 file starts again, where "
                        "the first did)",
                        t, *file_first_ms_));
      }
    }
    if (back && file_first_ms_ && IsEpochTime(*file_first_ms_)) {
      const int64_t period = period_.value_or(1000);
      const int64_t earliest = *file_first_ms_ - std::max<int64_t>(10 * period, 10'000);
      if (t < earliest) {
        throw LogFormatError(
            path_, line,
            fmt::format("time goes back to {} ms, {:.3f} s before the log's first record ({} "
                        "ms): a damaged time? (the next job of a per_job_logs=0 file starts "
                        "where the first did)",
                        t, static_cast<double>(*file_first_ms_ - t) / 1000.0, *file_first_ms_));
      }
    }
  }

  std::vector<LogSegment> Finish(uint64_t size) {
    if (!segments_.empty()) segments_.back().end_offset = size;
    return std::move(segments_);
  }

 private:
  std::vector<LogSegment> segments_;
  std::optional<int64_t> last_[3];
  // Per direction: its first end time in the segment, or kSpaced once its spacing is known.
  static constexpr int64_t kSpaced = -1;
  std::optional<int64_t> first_[3];
  std::optional<int64_t> period_;  // the smallest spacing of a direction's first two times
  bool timed_ = false;             // the last segment has a readable time
  bool damaged_ = false;           // a line was not readable
  const std::string& path_;
  std::optional<int64_t> file_first_ms_;  // the first readable time of the file
};

}  // namespace

// A file opened read-only (fd -1 when it cannot be), closed however the caller ends.
struct ReadOnlyFile {
  explicit ReadOnlyFile(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ReadOnlyFile() {
    if (fd >= 0) ::close(fd);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  int fd;
};

int64_t MaxRecordGapMs(const std::optional<int64_t>& period_ms) {
  return std::max(kMaxRecordGapMs, kMaxRecordGapPeriods * period_ms.value_or(1));
}

uint64_t CountNewlines(const std::string& path, uint64_t begin, uint64_t end) {
  const ReadOnlyFile file(path);
  if (file.fd < 0) throw std::system_error(errno, std::generic_category(), "open '" + path + "'");
  std::vector<char> block(size_t{256} << 10);
  uint64_t count = 0;
  for (uint64_t offset = begin; offset < end;) {
    const auto want = static_cast<size_t>(std::min<uint64_t>(block.size(), end - offset));
    const ssize_t got = ::pread(file.fd, block.data(), want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::system_error(errno, std::generic_category(), "read '" + path + "'");
    if (got == 0) break;
    count += static_cast<uint64_t>(std::count(block.data(), block.data() + got, '\n'));
    offset += static_cast<uint64_t>(got);
  }
  return count;
}

namespace {

// Notes the line [begin, end) (line number `line`, of the first block) in the guess's first
// records: the layout from the first line's field count, and each direction's first time. A line
// whose time and direction do not read is left to the reader (which reports it).
void NoteFirstRecord(const char* begin, const char* end, uint64_t line, bool& layout_seen,
                     SegmentGuess& guess) {
  const char* p = begin;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  if (p == end) return;  // blank
  if (!layout_seen) {
    layout_seen = true;
    guess.layout = LayoutOfFieldCount(1 + static_cast<size_t>(std::count(begin, end, ',')));
  }
  p = begin;
  const auto time = LeadingNumber(p, end);
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (!time || p == end || *p != ',') return;
  const auto ddir = LeadingNumber(++p, end);
  if (!ddir || *ddir > 2 || guess.first[*ddir]) return;
  guess.first[*ddir] = SegmentGuess::FirstRecord{static_cast<int64_t>(*time), line};
}

}  // namespace

std::optional<SegmentGuess> GuessLogSegment(const std::string& path, LargeBuffer& buffer) {
  const ReadOnlyFile file(path);
  struct stat st;
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < 4 * kGuessBlock) return std::nullopt;  // a scan costs little
  if (buffer.size_bytes() < kGuessBlock) buffer = LargeBuffer::Bytes(kGuessBlock);
  char* const data = buffer.bytes();
  auto read_at = [&](uint64_t offset) -> std::optional<size_t> {
    size_t len = 0;
    while (len < kGuessBlock) {
      const ssize_t got =
          ::pread(file.fd, data + len, kGuessBlock - len, static_cast<off_t>(offset + len));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return std::nullopt;  // an error or a file that shrank: let the scan say
      len += static_cast<size_t>(got);
    }
    return len;
  };

  // The first block's complete lines, as the scan reads them.
  if (!read_at(0)) return std::nullopt;
  SegmentBuilder builder(path);
  SegmentGuess guess;
  bool layout_seen = false;
  size_t pos = 0;
  uint64_t line = 0;
  try {
    while (true) {
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', kGuessBlock - pos));
      if (nl == nullptr) break;
      const size_t stop = static_cast<size_t>(nl - data);
      builder.Line(data + pos, data + stop, pos, ++line);
      NoteFirstRecord(data + pos, data + stop, line, layout_seen, guess);
      pos = stop + 1;
    }
  } catch (const LogFormatError&) {
    return std::nullopt;  // the scan reports it
  }
  if (!builder.Settled()) return std::nullopt;
  guess.period_ms = builder.period();
  guess.segment = builder.Finish(size).front();

  // The last block: the latest time of its lines (the first one may be partial, the last one
  // torn; an overestimate only makes the caller read per direction).
  if (!read_at(size - kGuessBlock)) return std::nullopt;
  const char* p = static_cast<const char*>(std::memchr(data, '\n', kGuessBlock));
  if (p == nullptr) return std::nullopt;
  const char* end = data + kGuessBlock;
  int64_t latest = guess.segment.last_end_ms;
  for (++p; p < end;) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* stop = nl ? nl : end;
    const char* q = p;
    if (const auto time = LeadingNumber(q, stop)) {
      latest = std::max(latest, static_cast<int64_t>(*time));
    }
    p = stop + 1;
  }
  // Times below the first block's latest: the file holds more than one job (per_job_logs=0).
  if (latest == guess.segment.last_end_ms) return std::nullopt;
  guess.segment.last_end_ms = latest;
  return guess;
}

std::vector<LogSegment> ScanLogSegments(const std::string& path) {
  LargeBuffer buffer;
  return ScanLogSegments(path, buffer);
}

std::vector<LogSegment> ScanLogSegments(const std::string& path, LargeBuffer& buffer) {
  // The file is closed however the scan ends (a damaged time throws from the builder).
  const ReadOnlyFile file(path);
  const int fd = file.fd;
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open '" + path + "'");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw UsageError(fmt::format(
        "'{}' is not a regular file (a device, FIFO or socket): histogram logs are files", path));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  // Blocks small enough to stay in a core's L2 cache between the kernel's copy and the search for
  // line ends (a 1 MiB block made the scan a third slower); the buffer grows for a longer line.
  constexpr size_t kBlockSize = size_t{128} << 10;
  size_t block = kBlockSize;  // read into [0, block) of the buffer
  if (buffer.size_bytes() < block) buffer = LargeBuffer::Bytes(block);
  SegmentBuilder builder(path);
  size_t len = 0;     // bytes in buffer
  uint64_t base = 0;  // file offset of buffer[0]
  uint64_t line = 0;
  while (true) {
    ssize_t got;
    do {
      got = ::read(fd, buffer.bytes() + len, block - len);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
      const int error = errno;
      throw std::system_error(error, std::generic_category(), "read '" + path + "'");
    }
    len += static_cast<size_t>(got);
    const bool eof = got == 0;
    size_t pos = 0;
    while (pos < len) {
      const char* data = buffer.bytes();
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', len - pos));
      if (nl == nullptr && !eof) break;
      const size_t stop = nl ? static_cast<size_t>(nl - data) : len;
      ++line;
      builder.Line(data + pos, data + stop, base + pos, line);
      pos = stop + 1;
    }
    if (eof) return builder.Finish(base + len);
    if (pos > len) pos = len;
    const size_t keep = len - pos;
    if (keep == block) {
      // A line longer than 1 MiB: no histogram log has one (fio's longest is about 40 KB).
      if (block >= kMaxScanLine) {
        throw LogFormatError(path, line + 1,
                             "a line longer than 1 MiB: not a histogram log (binary data?)");
      }
      block *= 2;
      if (buffer.size_bytes() < block) {
        LargeBuffer bigger = LargeBuffer::Bytes(block);
        std::memcpy(bigger.bytes(), buffer.bytes(), len);
        buffer = std::move(bigger);
      }
    }
    std::memmove(buffer.bytes(), buffer.bytes() + pos, keep);
    base += pos;
    len = keep;
  }
}

}  // namespace iotail::stats
