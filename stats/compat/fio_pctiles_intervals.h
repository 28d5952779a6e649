// The fio-histo-log-pctiles emulation's arithmetic: the grid of time quanta, the alignment of a
// log's records onto it, the buckets' value ranges and the percentiles of one quantum, each as
// the script computes it (get_time_intervals, align_histo_log, time_ranges, get_pctiles), with
// the same floating-point operations in the same order, so that results match bit for bit.
//
// Internal to stats/compat. Free functions that write only their output arguments; AlignSegment
// may run on parallel threads, each with its own accumulator and Notes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "stats/compat/fio_pctiles_compat.h"
#include "stats/compat/fio_pctiles_input.h"
#include "stats/compat/fio_pctiles_notes.h"

namespace iotail::stats::fio_compat {

// Python's // for b > 0.
int64_t FloorDiv(int64_t a, int64_t b);

// The grid of quanta, as the script's get_time_intervals().
struct Grid {
  int64_t min_ts = 0;       // test start, ms
  int64_t qtm_ms = 0;       // quantum, ms
  int64_t count = 0;        // number of quanta
  int64_t end_time_ms = 0;  // where a direction's last record ends (whole seconds of min_ts)
};

// The grid from the test start to the test end (ms) in quanta of `quantum_s` seconds.
Grid MakeGrid(int64_t test_start, int64_t test_end, int64_t quantum_s);

// The script's align_histo_log() for one segment, into acc (count x buckets, zeroed).
void AlignSegment(const Segment& seg, const Grid& grid, size_t buckets, int coarseness,
                  std::vector<double>& acc, Notes& notes);

// The script's time_ranges(): [min, max) of each bucket in microseconds (fio 3 counts ns, fio 2
// us), computed in the same floating-point steps. For a coarse layout, a bucket spans 2^c buckets.
void BucketRanges(const FioPctilesCompatOptions& o, int groups, int coarseness,
                  std::vector<double>& lo, std::vector<double>& hi);

// The script's get_pctiles() on one aggregated histogram. Appends (percentile, value) pairs with
// dictionary semantics (a repeated percentile overwrites). Returns false for an empty histogram.
bool ScriptPercentiles(const double* h, size_t n, const std::vector<double>& wanted,
                       const std::vector<double>& lo, const std::vector<double>& hi,
                       std::vector<std::pair<double, double>>& result, Notes& notes);

}  // namespace iotail::stats::fio_compat
