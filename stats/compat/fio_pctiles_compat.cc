#include "stats/compat/fio_pctiles_compat.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "stats/compat/fio_pctiles_input.h"
#include "stats/compat/fio_pctiles_intervals.h"
#include "stats/compat/fio_pctiles_notes.h"
#include "stats/compat/python_format.h"
#include "stats/core/errors.h"
#include "stats/util/enum_names.h"
#include "stats/util/parallel_for.h"

namespace iotail::stats {
namespace {

using fio_compat::Grid;
using fio_compat::Notes;
using fio_compat::ParsedFile;
using fio_compat::Segment;

constexpr EnumName<FioPctilesUnit> kUnitNames[] = {{FioPctilesUnit::kMsec, "msec"},
                                                   {FioPctilesUnit::kUsec, "usec"},
                                                   {FioPctilesUnit::kNsec, "nsec"}};

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
    fio_compat::ParseHistFile(files[i], buckets_per_interval, o.log_hist_msec, parsed[i]);
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
    notes.Merge(f.notes);
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
  const Grid grid = fio_compat::MakeGrid(test_start, test_end, o.time_quantum_s);
  const size_t buckets = buckets_per_interval >> coarseness;
  const size_t cells = static_cast<size_t>(grid.count) * buckets;
  std::vector<double> total(cells, 0.0);
  std::mutex merge_mutex;
  std::condition_variable merge_turn;
  size_t merged = 0;
  std::vector<Notes> align_notes(segments.size());
  ParallelFor(segments.size(), threads, [&](size_t i, unsigned) {
    std::vector<double> acc(cells, 0.0);
    fio_compat::AlignSegment(*segments[i], grid, buckets, coarseness, acc, align_notes[i]);
    std::unique_lock lock(merge_mutex);
    merge_turn.wait(lock, [&] { return merged == i; });
    for (size_t c = 0; c < cells; ++c) total[c] += acc[c];
    ++merged;
    merge_turn.notify_all();
  });
  for (const Notes& n : align_notes) notes.Merge(n);

  // Header and one row per quantum.
  std::vector<double> lo, hi;
  fio_compat::BucketRanges(o, groups, coarseness, lo, hi);
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
    if (!fio_compat::ScriptPercentiles(h, buckets, o.percentiles, lo, hi, values, notes)) {
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
  notes.Print(err);
  return 0;
}

}  // namespace iotail::stats
