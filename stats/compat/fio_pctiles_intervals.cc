#include "stats/compat/fio_pctiles_intervals.h"

#include <algorithm>

namespace iotail::stats::fio_compat {

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

Grid MakeGrid(int64_t test_start, int64_t test_end, int64_t quantum_s) {
  Grid grid;
  grid.min_ts = test_start;
  grid.qtm_ms = quantum_s * 1000;
  const int64_t max_s = FloorDiv(test_end, 1000), min_s = FloorDiv(test_start, 1000);
  grid.count = (max_s - min_s + quantum_s) / quantum_s;
  grid.end_time_ms = (min_s + grid.count * quantum_s) * 1000;
  return grid;
}

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
      notes.Add(Note::kFarNext);
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
        notes.Add(Note::kZeroLength);
      } else {
        weight = static_cast<double>(std::min(qe, e) - std::max(qs, t));
        weight /= static_cast<double>(e - t);
      }
      int64_t slot = q;
      if (slot < 0) slot += grid.count;  // Python's negative list index
      if (slot < 0) {
        notes.Add(Note::kBelowRange);
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
      notes.Add(Note::kZeroStep);
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
    notes.Add(Note::kUnreached);
    for (; index < wanted.size(); ++index) {
      put(wanted[index], interpolate(last_nonempty, wanted[index], last, pct));
    }
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

}  // namespace iotail::stats::fio_compat
