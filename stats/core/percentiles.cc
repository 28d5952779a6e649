#include "stats/core/percentiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "stats/core/errors.h"
#include "stats/util/option_text.h"

namespace iotail::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The buckets whose count is above zero, in order: their indices and counts. A histogram is mostly
// runs of empty buckets: eight at a time are tested at once (their bits ORed: zero only when all
// are +0), so a run costs a load and a compare per eight buckets rather than a mispredicted branch
// per bucket. The sums below then run over these alone, in plain loops without calls, so that
// their long doubles stay in registers: walking the histogram with a callback kept them in memory
// (80-bit stores and loads on every bucket) and cost most of `iotail pctiles`'s time per row.
// The vectors are the calling thread's, reused from call to call.
template <typename Count>
struct NonZeroBuckets {
  std::vector<uint32_t> index;  // the first n are valid (the vectors only grow)
  std::vector<Count> count;
  size_t n = 0;
};

template <typename Count>
NonZeroBuckets<Count>& CollectNonZero(std::span<const Count> counts) {
  static_assert(sizeof(Count) == sizeof(uint64_t));
  thread_local NonZeroBuckets<Count> buckets;
  if (buckets.index.size() < counts.size()) {
    buckets.index.resize(counts.size());
    buckets.count.resize(counts.size());
  }
  uint32_t* index = buckets.index.data();
  Count* count = buckets.count.data();
  constexpr size_t kBlock = 8;
  const size_t size = counts.size();
  size_t n = 0;
  size_t i = 0;
  while (i < size) {
    if (i + kBlock <= size) {
      uint64_t bits[kBlock];
      std::memcpy(bits, counts.data() + i, sizeof(bits));
      uint64_t any = 0;
      for (size_t k = 0; k < kBlock; ++k) any |= bits[k];
      if (any == 0) {
        i += kBlock;
        continue;
      }
    }
    const size_t stop = std::min(size, i + kBlock);
    for (; i < stop; ++i) {  // written always, kept when above zero: no branch to mispredict
      index[n] = static_cast<uint32_t>(i);
      count[n] = counts[i];
      n += counts[i] > 0;
    }
  }
  buckets.n = n;
  return buckets;
}

// The sum of counts in long double, in order. A function of its own so that the sum stays in a
// register (inline, GCC kept it in memory: a store and a reload per count).
template <typename Count>
[[gnu::noinline]] long double SumInOrder(const Count* counts, size_t n) {
  long double sum = 0;
  for (size_t j = 0; j < n; ++j) sum += static_cast<long double>(counts[j]);
  return sum;
}

template <typename Count>
std::vector<double> PercentilesImpl(const NonZeroBuckets<Count>& buckets,
                                    const HistogramLayout& layout,
                                    std::span<const double> percentiles, PercentileMethod method) {
  std::vector<double> values(percentiles.size(), kNaN);
  const size_t n = buckets.n;
  const Count* count_of = buckets.count.data();
  const long double total = SumInOrder(count_of, n);
  if (total <= 0 || percentiles.empty()) return values;

  // Visit the percentiles in ascending order, as fio does, and write each back in place.
  std::vector<size_t> order(percentiles.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return percentiles[a] < percentiles[b]; });

  // fio's source reads `sum >= (long double)p / 100.0 * nr`, but the compiled fio (3.33, Debian,
  // x86-64: see the disassembly of calc_clat_percentiles) computes p * (0.01L * nr) in 80-bit
  // long double, 0.01L being just below 1/100. That decides the ties where S is exactly p% of N
  // (N = 210, p = 30: fio reports the bucket where S reaches 63; p / 100 * N lands just above 63
  // and would report the next one). Compute the target as fio's binary does.
  const long double per_percent = 0.01L * total;
  const size_t wanted = order.size();
  std::vector<long double> target(wanted);
  for (size_t k = 0; k < wanted; ++k) {
    target[k] = static_cast<long double>(percentiles[order[k]]) * per_percent;
  }
  // Where each percentile (in ascending order) is reached: its bucket (the j-th non-empty one) and
  // the running sum before that bucket.
  std::vector<size_t> hit(wanted);
  std::vector<long double> before(wanted);
  size_t next = 0;
  long double sum = 0;
  for (size_t j = 0; j < n && next < wanted; ++j) {
    const long double previous = sum;
    sum += static_cast<long double>(count_of[j]);
    for (; next < wanted && !(sum < target[next]); ++next) {
      hit[next] = j;
      before[next] = previous;
    }
  }
  for (size_t k = 0; k < next; ++k) {
    const uint32_t i = buckets.index[hit[k]];
    double value;
    if (method == PercentileMethod::kFio) {
      value = layout.ValueNs(i);
    } else {
      const long double count = static_cast<long double>(count_of[hit[k]]);
      const long double fraction = std::clamp((target[k] - before[k]) / count, 0.0L, 1.0L);
      const double lo = layout.LowerNs(i);
      const double hi = layout.UpperNs(i);
      value = static_cast<double>(lo + fraction * (hi - lo));
    }
    values[order[k]] = value;
  }
  // Rounding in the running sum can leave the top percentiles (100) just short: they belong to the
  // highest non-empty bucket.
  const uint32_t last_nonempty = buckets.index[n - 1];
  for (; next < wanted; ++next) {
    values[order[next]] = method == PercentileMethod::kFio ? layout.ValueNs(last_nonempty)
                                                           : layout.UpperNs(last_nonempty);
  }
  return values;
}

template <typename Count>
HistogramStats StatsImpl(const NonZeroBuckets<Count>& buckets, const HistogramLayout& layout,
                         PercentileMethod method) {
  const size_t n = buckets.n;
  if (n == 0) return {0, kNaN, kNaN, kNaN};
  thread_local std::vector<double> value_of;
  value_of.resize(n);
  for (size_t j = 0; j < n; ++j) value_of[j] = layout.ValueNs(buckets.index[j]);
  long double samples = 0;
  long double weighted = 0;
  for (size_t j = 0; j < n; ++j) {
    const long double count = static_cast<long double>(buckets.count[j]);
    samples += count;
    weighted += count * value_of[j];
  }
  const uint32_t lo = buckets.index[0];
  const uint32_t hi = buckets.index[n - 1];
  HistogramStats stats;
  stats.samples = static_cast<double>(samples);
  stats.mean_ns = static_cast<double>(weighted / samples);
  if (method == PercentileMethod::kFio) {
    stats.min_ns = layout.ValueNs(lo);
    stats.max_ns = layout.ValueNs(hi);
  } else {
    stats.min_ns = layout.LowerNs(lo);
    stats.max_ns = layout.UpperNs(hi);
  }
  return stats;
}

template <typename Count>
std::vector<double> StatsAndPercentilesImpl(std::span<const Count> counts,
                                            const HistogramLayout& layout,
                                            std::span<const double> percentiles,
                                            PercentileMethod method, HistogramStats& stats) {
  const NonZeroBuckets<Count>& buckets = CollectNonZero(counts);
  stats = StatsImpl(buckets, layout, method);
  return PercentilesImpl(buckets, layout, percentiles, method);
}

constexpr double kFioDefault[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                  80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

}  // namespace

PercentileMethod ParsePercentileMethod(std::string_view text, std::string_view option) {
  if (text == "fio") return PercentileMethod::kFio;
  if (text == "interpolate") return PercentileMethod::kInterpolate;
  throw UsageError(fmt::format("{}: expected 'fio' or 'interpolate', got '{}'", option, text));
}

std::string_view PercentileMethodName(PercentileMethod method) {
  return method == PercentileMethod::kFio ? "fio" : "interpolate";
}

std::span<const double> FioDefaultPercentiles() { return kFioDefault; }

std::vector<double> ComputePercentiles(std::span<const uint64_t> counts,
                                       const HistogramLayout& layout,
                                       std::span<const double> percentiles,
                                       PercentileMethod method) {
  return PercentilesImpl(CollectNonZero(counts), layout, percentiles, method);
}

std::vector<double> ComputePercentiles(std::span<const double> counts,
                                       const HistogramLayout& layout,
                                       std::span<const double> percentiles,
                                       PercentileMethod method) {
  return PercentilesImpl(CollectNonZero(counts), layout, percentiles, method);
}

HistogramStats ComputeStats(std::span<const uint64_t> counts, const HistogramLayout& layout,
                            PercentileMethod method) {
  return StatsImpl(CollectNonZero(counts), layout, method);
}

HistogramStats ComputeStats(std::span<const double> counts, const HistogramLayout& layout,
                            PercentileMethod method) {
  return StatsImpl(CollectNonZero(counts), layout, method);
}

std::vector<double> ComputeStatsAndPercentiles(std::span<const uint64_t> counts,
                                               const HistogramLayout& layout,
                                               std::span<const double> percentiles,
                                               PercentileMethod method, HistogramStats& stats) {
  return StatsAndPercentilesImpl(counts, layout, percentiles, method, stats);
}

std::vector<double> ComputeStatsAndPercentiles(std::span<const double> counts,
                                               const HistogramLayout& layout,
                                               std::span<const double> percentiles,
                                               PercentileMethod method, HistogramStats& stats) {
  return StatsAndPercentilesImpl(counts, layout, percentiles, method, stats);
}

std::vector<double> ParsePercentileList(std::span<const std::string> args,
                                        std::string_view option) {
  std::vector<double> values;
  ForEachListItem(args, ":,", [&](std::string_view item, const std::string& arg) {
    const auto value = ParseFiniteDouble(item);
    if (!value || *value < 0 || *value > 100) {
      throw UsageError(fmt::format(
          "{}: expected percentiles between 0 and 100 separated by ':' or ',', got '{}'", option,
          arg));
    }
    values.push_back(*value);
  });
  if (values.empty()) throw UsageError(fmt::format("{}: expected at least one percentile", option));
  return values;
}

std::string PercentileLabel(double percentile) { return fmt::format("p{}", percentile); }

}  // namespace iotail::stats
