#include "stats/compat/fio_pctiles_compat.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <system_error>
#include <thread>

#include "stats/compat/python_format.h"
#include "stats/core/errors.h"
#include "stats/util/enum_names.h"
#include "stats/util/mapped_file.h"
#include "stats/util/parallel_for.h"

namespace iotail::stats {
namespace {

constexpr int kDirections = 3;              // read, write, trim (the script knows only 0 and 1)
constexpr int64_t kEpochFloorMs = 1000000;  // the script's "relative times" threshold
constexpr int kMaxCompatCoarseness = 6;

constexpr EnumName<FioPctilesUnit> kUnitNames[] = {{FioPctilesUnit::kMsec, "msec"},
                                                   {FioPctilesUnit::kUsec, "usec"},
                                                   {FioPctilesUnit::kNsec, "nsec"}};

int64_t FloorDiv(int64_t a, int64_t b) {  // Python's // for b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Python str.strip() and int() whitespace, ASCII part.
bool IsPySpace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

// One log as the script sees a file: a file, or one job of a per_job_logs=0 file. Counts are kept
// sparse (non-zero buckets only), already converted to double as Python's float * int does.
struct Segment {
  int coarseness = 0;
  std::vector<int64_t> times;
  std::vector<uint8_t> dirs;
  std::vector<uint32_t> nz_begin{0};  // record k's counts: [nz_begin[k], nz_begin[k + 1])
  std::vector<uint32_t> nz_index;
  std::vector<double> nz_value;
  int64_t start = 0;
  int64_t end = 0;
};

struct Notes {
  bool trim = false, segments = false, coarse = false, zero_length = false, far_next = false,
       below_range = false, unreached = false, zero_step = false;
};

struct ParsedFile {
  std::vector<Segment> segments;
  std::string error;  // the script's message (printed after "ERROR: "); empty if none
  Notes notes;
};

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

// Reads one file the way the script's parse_hist_file does (same checks, same order, same
// messages), with the extensions described in the header (trim, segments, coarse logs).
void ParseFile(const std::string& path, uint32_t buckets_per_interval,
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
      result.notes.trim = true;
    } else if (direction != 0 && direction != 1) {
      return void(result.error = "invalid I/O direction " + Suffix(k, path));
    }
    const int64_t time_ms = fields.head[0];
    if (time_ms < previous_ts[direction]) {
      result.notes.segments = true;
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
      if (coarseness > 0) result.notes.coarse = true;
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

// The script's time_ranges(): [min, max) of each bucket in microseconds (fio 3 counts ns, fio 2
// us), computed in the same floating-point steps. For a coarse layout, a bucket spans 2^c buckets.
void BucketRanges(const FioPctilesCompatOptions& o, int groups, int coarseness,
                  std::vector<double>& lo, std::vector<double>& hi) {
  const uint64_t per_group = uint64_t{1} << o.bucket_bits;
  std::vector<double> fine_lo, fine_hi;
  uint64_t width = 1, base = 0;
  for (int g = 0; g < groups; ++g) {
    for (uint64_t b = 0; b < per_group; ++b) {
      double rmin = static_cast<double>(base);
      double rmax = rmin + static_cast<double>(width);
      if (o.fio_version == 3) {
        rmin /= 1000;
        rmax /= 1000;
      }
      fine_lo.push_back(rmin);
      fine_hi.push_back(rmax);
      base += width;
    }
    if (g != 0) width *= 2;
  }
  const size_t step = size_t{1} << coarseness;
  lo.clear();
  hi.clear();
  for (size_t i = 0; i + step <= fine_lo.size(); i += step) {
    lo.push_back(fine_lo[i]);
    hi.push_back(fine_hi[i + step - 1]);
  }
}

// The script's get_pctiles() on one aggregated histogram. Appends (percentile, value) pairs with
// dictionary semantics (a repeated percentile overwrites). Returns false for an empty histogram.
bool ScriptPercentiles(const double* h, size_t n, const std::vector<double>& wanted,
                       const std::vector<double>& lo, const std::vector<double>& hi,
                       std::vector<std::pair<double, double>>& result, Notes& notes) {
  result.clear();
  double total = 0.0;
  for (size_t b = 0; b < n; ++b) total += h[b];
  if (total == 0.0) return false;
  auto put = [&](double key, double value) {
    for (auto& kv : result) {
      if (kv.first == key) return void(kv.second = value);
    }
    result.emplace_back(key, value);
  };
  auto interpolate = [&](size_t b, double next, double last, double pct) {
    double frac = 0.0;
    if (pct - last != 0.0) {
      frac = (next - last) / (pct - last);
    } else {
      notes.zero_step = true;
    }
    return lo[b] + frac * (hi[b] - lo[b]);
  };
  size_t index = 0;
  double next = wanted[0];
  double pct = 0.0, last = 0.0, so_far = 0.0;
  size_t last_nonempty = 0;
  for (size_t b = 0; b < n && index < wanted.size(); ++b) {
    if (h[b] == 0) continue;
    last_nonempty = b;
    so_far += h[b];
    last = pct;
    pct = 100.0 * so_far / total;
    while ((next == 100.0 && pct >= 99.9999) || (next < 100.0 && pct > next)) {
      put(next, interpolate(b, next, last, pct));
      if (++index == wanted.size()) break;
      next = wanted[index];
    }
  }
  if (index < wanted.size()) {
    notes.unreached = true;
    for (; index < wanted.size(); ++index) {
      put(wanted[index], interpolate(last_nonempty, wanted[index], last, pct));
    }
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

// The grid of quanta, as the script's get_time_intervals().
struct Grid {
  int64_t min_ts = 0;       // test start, ms
  int64_t qtm_ms = 0;       // quantum, ms
  int64_t count = 0;        // number of quanta
  int64_t end_time_ms = 0;  // where a direction's last record ends (whole seconds of min_ts)
};

// The script's align_histo_log() for one segment, into acc (count x buckets, zeroed).
void AlignSegment(const Segment& seg, const Grid& grid, size_t buckets, int coarseness,
                  std::vector<double>& acc, Notes& notes) {
  const size_t n = seg.times.size();
  const int shift = coarseness - seg.coarseness;
  std::vector<int64_t> next_same(n, -1);
  int64_t seen[kDirections] = {-1, -1, -1};
  for (size_t k = n; k-- > 0;) {
    next_same[k] = seen[seg.dirs[k]];
    seen[seg.dirs[k]] = static_cast<int64_t>(k);
  }
  for (size_t k = 0; k < n; ++k) {
    const int64_t t = seg.times[k];
    const int64_t e = next_same[k] >= 0 ? seg.times[next_same[k]] : grid.end_time_ms;
    // The script looks at most 3 records ahead and asserts if the third is another direction.
    if (next_same[k] > static_cast<int64_t>(k) + 3 || (next_same[k] < 0 && k + 3 < n)) {
      notes.far_next = true;
    }
    const int64_t offset = t - grid.min_ts;
    int64_t q = FloorDiv(offset, grid.qtm_ms);
    int64_t qs = grid.min_ts + q * grid.qtm_ms;
    int64_t qe = grid.min_ts + FloorDiv(offset + grid.qtm_ms, grid.qtm_ms) * grid.qtm_ms;
    const uint32_t nz_begin = seg.nz_begin[k], nz_end = seg.nz_begin[k + 1];
    for (; qs < e; qs += grid.qtm_ms, qe += grid.qtm_ms, ++q) {
      if (q >= grid.count) break;
      double weight = 1.0;
      if (e == t) {
        notes.zero_length = true;
      } else {
        weight = static_cast<double>(std::min(qe, e) - std::max(qs, t));
        weight /= static_cast<double>(e - t);
      }
      int64_t slot = q;
      if (slot < 0) slot += grid.count;  // Python's negative list index
      if (slot < 0) {
        notes.below_range = true;
        continue;
      }
      double* row = acc.data() + static_cast<size_t>(slot) * buckets;
      for (uint32_t i = nz_begin; i < nz_end; ++i) {
        row[seg.nz_index[i] >> shift] += weight * seg.nz_value[i];
      }
      if (e == t) break;
    }
  }
}

void PrintNotes(const Notes& n, std::ostream& err) {
  const char* kPrefix = "fio-histo-log-pctiles compat: note: ";
  if (n.trim)
    err << kPrefix
        << "trim records (ddir 2) counted like reads and writes "
           "(the script stops: invalid I/O direction)\n";
  if (n.segments)
    err << kPrefix
        << "time goes backwards (per_job_logs=0): each job read as its "
           "own log (the script stops: timestamp decreased)\n";
  if (n.coarse)
    err << kPrefix
        << "coarse log (log_hist_coarseness) read with merged buckets "
           "(the script stops: wrong bucket count)\n";
  if (n.zero_length)
    err << kPrefix
        << "zero-length intervals (duplicate time stamps) counted "
           "whole in their quantum (the script: ZeroDivisionError)\n";
  if (n.far_next)
    err << kPrefix
        << "next record of a direction more than 3 lines ahead "
           "(the script: AssertionError)\n";
  if (n.below_range)
    err << kPrefix
        << "records far before the test start dropped "
           "(the script: IndexError)\n";
  if (n.unreached)
    err << kPrefix
        << "a percentile not reached by rounding, taken in the last "
           "non-empty bucket (the script: AssertionError)\n";
  if (n.zero_step)
    err << kPrefix
        << "a zero percentage step, lower bucket edge used "
           "(the script: ZeroDivisionError)\n";
}

void MergeNotes(Notes& into, const Notes& n) {
  into.trim |= n.trim;
  into.segments |= n.segments;
  into.coarse |= n.coarse;
  into.zero_length |= n.zero_length;
  into.far_next |= n.far_next;
  into.below_range |= n.below_range;
  into.unreached |= n.unreached;
  into.zero_step |= n.zero_step;
}

}  // namespace

FioPctilesUnit ParseFioPctilesUnit(std::string_view text) {
  if (const auto unit = ValueNamed(kUnitNames, text)) return *unit;
  throw UsageError("argument --output-unit: expected msec, usec or nsec, got '" +
                   std::string(text) + "'");
}

std::string_view FioPctilesUnitName(FioPctilesUnit unit) { return NameOf(kUnitNames, unit); }

void ValidateFioPctilesCompatOptions(const FioPctilesCompatOptions& o) {
  if (o.fio_version != 2 && o.fio_version != 3) {
    throw UsageError("argument --fio-version: invalid choice: " + std::to_string(o.fio_version) +
                     " (choose from 2, 3)");
  }
  const int groups = o.fio_version == 2 ? 19 : o.bucket_groups;
  if (groups < 1 || groups > 62) {
    throw UsageError("argument --bucket-groups: expected 1 to 62 groups, got " +
                     std::to_string(o.bucket_groups));
  }
  if (o.bucket_bits < 0 || o.bucket_bits > 20 || o.bucket_bits + groups > 62) {
    throw UsageError(
        "argument --bucket-bits: expected 0 to 20 bits (and bits + groups <= 62), got " +
        std::to_string(o.bucket_bits));
  }
  if (o.time_quantum_s <= 0) {
    throw UsageError("argument --time-quantum: must be a positive number of seconds, got " +
                     std::to_string(o.time_quantum_s));
  }
  if (o.percentiles.empty()) throw UsageError("argument --percentiles: expected at least one");
  for (double p : o.percentiles) {
    if (std::isnan(p) || p > 100.0) {
      throw UsageError("argument --percentiles: each must be a number up to 100, got " +
                       PythonFloatRepr(p));
    }
  }
  if (o.files.empty()) throw UsageError("the following arguments are required: file_list");
}

int RunFioPctilesCompat(const FioPctilesCompatOptions& o, std::ostream& out, std::ostream& err) {
  ValidateFioPctilesCompatOptions(o);
  const int groups = o.fio_version == 2 ? 19 : o.bucket_groups;
  const uint32_t per_group = 1u << o.bucket_bits;
  const uint32_t buckets_per_interval = per_group * static_cast<uint32_t>(groups);

  // The preamble, printed before any file is read.
  std::string text;
  text += "fio version = " + std::to_string(o.fio_version) + "\n";
  text += "bucket groups = " + std::to_string(groups) + "\n";
  text += "bucket bits = " + std::to_string(o.bucket_bits) + "\n";
  text += "time quantum = " + std::to_string(o.time_quantum_s) + " sec\n";
  text += "percentiles = ";
  for (size_t i = 0; i < o.percentiles.size(); ++i) {
    text += (i ? "," : "") + PythonFloatRepr(o.percentiles[i]);
  }
  text += "\nbuckets per group = " + std::to_string(per_group) + "\n";
  text += "buckets per interval = " + std::to_string(buckets_per_interval) + " \n";
  if (o.log_hist_msec) text += "log_hist_msec = " + std::to_string(*o.log_hist_msec) + "\n";
  text += "output unit = " + std::string(FioPctilesUnitName(o.output_unit)) + "\n";
  out << text;
  text.clear();

  // Parse every file (a file listed twice counts once, as a key of the script's dict).
  std::vector<std::string> files;
  for (const auto& f : o.files) {
    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  }
  const unsigned threads =
      o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<ParsedFile> parsed(files.size());
  ParallelFor(files.size(), threads, [&](size_t i, unsigned) {
    ParseFile(files[i], buckets_per_interval, o.log_hist_msec, parsed[i]);
  });
  Notes notes;
  std::vector<const Segment*> segments;
  int64_t test_start = 0;
  int64_t test_end = 1'000'000'000'000'000'000;
  int coarseness = 0;
  for (const ParsedFile& f : parsed) {
    if (!f.error.empty()) {
      out << "ERROR: " << f.error << "\n";
      return 1;
    }
    MergeNotes(notes, f.notes);
    for (const Segment& s : f.segments) {
      segments.push_back(&s);
      test_start = std::max(test_start, s.start);
      test_end = std::min(test_end, s.end);
      coarseness = std::max(coarseness, s.coarseness);
    }
  }
  if (test_start >= test_end) {
    out.flush();
    err << "fio-histo-log-pctiles compat: no time interval when all threads logs overlapped "
           "(start "
        << test_start << " ms, end " << test_end << " ms)\n";
    return 1;
  }
  if (test_start > 0) {
    const double seconds = static_cast<double>(test_start) / 1000.0;
    text += "all threads running as of unix epoch time " +
            std::to_string(static_cast<int64_t>(seconds)) + " = " + PyCtime(seconds) + "\n";
  }

  // Align each segment (in parallel) and add them up in list order, as the script does.
  Grid grid;
  grid.min_ts = test_start;
  grid.qtm_ms = o.time_quantum_s * 1000;
  const int64_t max_s = FloorDiv(test_end, 1000), min_s = FloorDiv(test_start, 1000);
  grid.count = (max_s - min_s + o.time_quantum_s) / o.time_quantum_s;
  grid.end_time_ms = (min_s + grid.count * o.time_quantum_s) * 1000;
  const size_t buckets = buckets_per_interval >> coarseness;
  const size_t cells = static_cast<size_t>(grid.count) * buckets;
  std::vector<double> total(cells, 0.0);
  std::mutex merge_mutex;
  std::condition_variable merge_turn;
  size_t merged = 0;
  std::vector<Notes> align_notes(segments.size());
  ParallelFor(segments.size(), threads, [&](size_t i, unsigned) {
    std::vector<double> acc(cells, 0.0);
    AlignSegment(*segments[i], grid, buckets, coarseness, acc, align_notes[i]);
    std::unique_lock lock(merge_mutex);
    merge_turn.wait(lock, [&] { return merged == i; });
    for (size_t c = 0; c < cells; ++c) total[c] += acc[c];
    ++merged;
    merge_turn.notify_all();
  });
  for (const Notes& n : align_notes) MergeNotes(notes, n);

  // Header and one row per quantum.
  std::vector<double> lo, hi;
  BucketRanges(o, groups, coarseness, lo, hi);
  text += "time (millisec), percentiles in increasing order with values in " +
          std::string(FioPctilesUnitName(o.output_unit)) + "\n";
  text += "msec-since-start, samples, ";
  for (double p : o.percentiles) {
    if (p == 0.0) {
      text += "min, ";
    } else if (p == 100.0) {
      text += "max, ";
    } else if (p == 50.0) {
      text += "median, ";
    } else {
      char buf[400];
      std::snprintf(buf, sizeof buf, "%3.1f, ", p);
      text += buf;
    }
  }
  text += "\n";
  std::vector<std::pair<double, double>> values;
  for (int64_t t = 0; t < grid.count; ++t) {
    const double* h = total.data() + static_cast<size_t>(t) * buckets;
    double samples = 0.0;
    for (size_t b = 0; b < buckets; ++b) samples += h[b];
    char buf[64];
    std::snprintf(buf, sizeof buf, "%8lld, %8lld, ",
                  static_cast<long long>(t * o.time_quantum_s * 1000),
                  static_cast<long long>(samples));
    text += buf;
    if (!ScriptPercentiles(h, buckets, o.percentiles, lo, hi, values, notes)) {
      for (size_t i = 0; i < o.percentiles.size(); ++i) text += ", ";
    } else {
      for (size_t i = 0; i < values.size(); ++i) {
        double v = values[i].second;
        if (o.output_unit == FioPctilesUnit::kMsec) v /= 1000.0;
        if (o.output_unit == FioPctilesUnit::kNsec) v *= 1000.0;
        if (i) text += ", ";
        text += PythonFloatRepr(v);
      }
    }
    text += "\n";
  }
  out << text;
  PrintNotes(notes, err);
  return 0;
}

}  // namespace iotail::stats
