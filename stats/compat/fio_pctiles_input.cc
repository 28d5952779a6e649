#include "stats/compat/fio_pctiles_input.h"

#include <algorithm>
#include <cstring>

#include "stats/util/mapped_file.h"

namespace iotail::stats::fio_compat {
namespace {

constexpr int64_t kEpochFloorMs = 1000000;  // the script's "relative times" threshold
constexpr int kMaxCompatCoarseness = 6;

// Python str.strip() and int() whitespace, ASCII part.
bool IsPySpace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

// One line's fields as the script's int() reads them: the count, the first three values, whether
// any is negative or beyond int64, and the non-zero bucket counts (index from the 4th field).
struct LineFields {
  size_t count = 0;
  int64_t head[3] = {0, 0, 0};
  bool negative = false;
  bool overflow = false;
  std::vector<uint32_t> nz_index;
  std::vector<double> nz_value;
};

// Parses one stripped line. Returns false on a token that is not an integer. The fast path skips
// runs of eight " 0," tokens (most of a log line) with one 24-byte comparison.
bool ParseLine(const char* p, const char* end, LineFields& f) {
  static constexpr char kEightZeros[] = " 0, 0, 0, 0, 0, 0, 0, 0,";
  f.count = 0;
  f.negative = f.overflow = false;
  f.nz_index.clear();
  f.nz_value.clear();
  while (true) {
    if (f.count >= 3) {
      while (end - p >= 24 && std::memcmp(p, kEightZeros, 24) == 0) {
        p += 24;
        f.count += 8;
      }
    }
    while (p < end && IsPySpace(*p)) ++p;
    bool negative = false;
    if (p < end && (*p == '-' || *p == '+')) negative = *p++ == '-';
    uint64_t v = 0;
    int digits = 0;
    bool last_underscore = false;
    while (p < end) {
      const unsigned d = static_cast<unsigned char>(*p) - '0';
      if (d <= 9) {
        if (v > (UINT64_MAX - d) / 10) f.overflow = true;
        v = v * 10 + d;
        ++digits;
        last_underscore = false;
      } else if (*p == '_' && digits > 0 && !last_underscore) {
        last_underscore = true;
      } else {
        break;
      }
      ++p;
    }
    if (digits == 0 || last_underscore) return false;
    while (p < end && IsPySpace(*p)) ++p;
    if (v > static_cast<uint64_t>(INT64_MAX)) f.overflow = true;
    const int64_t value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    if (value < 0) f.negative = true;
    if (f.count < 3) {
      f.head[f.count] = value;
    } else if (value != 0) {
      f.nz_index.push_back(static_cast<uint32_t>(f.count - 3));
      f.nz_value.push_back(static_cast<double>(value));
    }
    ++f.count;
    if (p == end) return true;
    if (*p != ',') return false;
    ++p;
  }
}

std::string Suffix(size_t k, const std::string& path) {
  // The script numbers records from 2 (it adds 1 twice).
  return "in histogram record " + std::to_string(k + 2) + " file " + path;
}

}  // namespace

void ParseHistFile(const std::string& path, uint32_t buckets_per_interval,
                   std::optional<int64_t> log_hist_msec, ParsedFile& result) {
  const MappedFile file(path);
  const char* p = file.data();
  const char* const file_end = p + file.size();
  LineFields fields;
  int64_t previous_ts[kDirections];
  int64_t last_time = -1;
  int last_direction = -1;
  std::optional<size_t> columns;
  int coarseness = 0;
  auto new_segment = [&] {
    result.segments.emplace_back();
    std::fill(previous_ts, previous_ts + kDirections, -1);
    last_time = -1;
    last_direction = -1;
  };
  new_segment();
  for (size_t k = 0; p < file_end; ++k) {
    // Universal newlines, as Python's text mode: \n, \r\n and \r each end a line.
    const char* begin = p;
    const char* newline = static_cast<const char*>(std::memchr(p, '\n', file_end - p));
    if (!newline) newline = file_end;
    const char* cr = static_cast<const char*>(std::memchr(p, '\r', newline - p));
    const char* end = cr ? cr : newline;
    p = end;
    if (p < file_end) p += (*p == '\r' && p + 1 < file_end && p[1] == '\n') ? 2 : 1;
    while (begin < end && IsPySpace(*begin)) ++begin;
    while (end > begin && IsPySpace(end[-1])) --end;
    if (begin == end) continue;

    if (!ParseLine(begin, end, fields)) {
      return void(result.error = "non-integer value " + Suffix(k, path));
    }
    if (fields.overflow) return void(result.error = "integer value too large " + Suffix(k, path));
    if (fields.negative) return void(result.error = "negative integer value " + Suffix(k, path));
    if (fields.count < 3) return void(result.error = "too few numbers " + Suffix(k, path));
    const int64_t direction = fields.head[1];
    if (direction == 2) {
      result.notes.Add(Note::kTrim);
    } else if (direction != 0 && direction != 1) {
      return void(result.error = "invalid I/O direction " + Suffix(k, path));
    }
    const int64_t time_ms = fields.head[0];
    if (time_ms < previous_ts[direction]) {
      result.notes.Add(Note::kSegments);
      new_segment();
    }
    previous_ts[direction] = time_ms;
    if (fields.head[2] > (int64_t{1} << 24)) {
      return void(result.error = "block size too large " + Suffix(k, path));
    }
    const size_t n = fields.count - 3;
    if (!columns) {
      for (int c = 0; c <= kMaxCompatCoarseness && !columns; ++c) {
        if (buckets_per_interval % (1u << c) == 0 && n == (buckets_per_interval >> c)) {
          columns = n;
          coarseness = c;
        }
      }
      if (coarseness > 0) result.notes.Add(Note::kCoarse);
    }
    if (!columns || n != *columns) {
      const size_t expected = columns ? *columns : buckets_per_interval;
      return void(result.error = std::to_string(n) + " buckets per interval but " +
                                 std::to_string(expected) + " expected in " + Suffix(k, path));
    }
    // The script's filter of consecutive records with the same time and direction.
    if (time_ms == last_time && direction == last_direction) continue;
    last_time = time_ms;
    last_direction = static_cast<int>(direction);

    Segment& seg = result.segments.back();
    seg.times.push_back(time_ms);
    seg.dirs.push_back(static_cast<uint8_t>(direction));
    seg.nz_index.insert(seg.nz_index.end(), fields.nz_index.begin(), fields.nz_index.end());
    seg.nz_value.insert(seg.nz_value.end(), fields.nz_value.begin(), fields.nz_value.end());
    seg.nz_begin.push_back(static_cast<uint32_t>(seg.nz_index.size()));
  }
  for (Segment& seg : result.segments) {
    seg.coarseness = coarseness;
    if (seg.times.empty()) return void(result.error = "no records in " + path);
    const int64_t first = seg.times[0];
    if (first < kEpochFloorMs) {
      seg.start = 0;
    } else if (log_hist_msec) {
      seg.start = first - *log_hist_msec;
    } else if (seg.times.size() > 1) {
      seg.start = first - (seg.times[1] - first);
    } else {
      return void(result.error = "no way to estimate test start time");
    }
    seg.end = seg.times.back();
  }
}

}  // namespace iotail::stats::fio_compat
