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

// Calls fn(i, count) for each bucket whose count is above zero, in order, until fn returns false.
// A histogram is mostly runs of empty buckets: eight at a time are tested at once (their bits
// ORed: zero only when all are +0), so a run costs a load and a compare per eight buckets rather
// than a mispredicted branch per bucket.
template <typename Count, typename Fn>
void ForEachNonZero(std::span<const Count> counts, Fn&& fn) {
  static_assert(sizeof(Count) == sizeof(uint64_t));
  constexpr size_t kBlock = 8;
  const size_t size = counts.size();
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
    for (; i < stop; ++i) {
      if (!(counts[i] > 0)) continue;  // tested before the (slow) long-double conversion
      if (!fn(static_cast<uint32_t>(i), counts[i])) return;
    }
  }
}

template <typename Count>
std::vector<double> PercentilesImpl(std::span<const Count> counts, const HistogramLayout& layout,
                                    std::span<const double> percentiles, PercentileMethod method) {
  std::vector<double> values(percentiles.size(), kNaN);
  long double total = 0;
  // Most buckets are empty: skip them rather than add zeros in a chain of long-double additions
  // (the same sum; a third of `iotail pctiles`'s time once was this loop).
  ForEachNonZero(counts, [&](uint32_t, Count c) {
    total += static_cast<long double>(c);
    return true;
  });
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
  size_t next = 0;
  long double sum = 0;
  uint32_t last_nonempty = 0;
  ForEachNonZero(counts, [&](uint32_t i, Count c) {
    const long double count = static_cast<long double>(c);
    last_nonempty = i;
    const long double before = sum;
    sum += count;
    while (next < order.size()) {
      const long double target = static_cast<long double>(percentiles[order[next]]) * per_percent;
      if (sum < target) break;
      double value;
      if (method == PercentileMethod::kFio) {
        value = layout.ValueNs(i);
      } else {
        const long double fraction = std::clamp((target - before) / count, 0.0L, 1.0L);
        const double lo = layout.LowerNs(i);
        const double hi = layout.UpperNs(i);
        value = static_cast<double>(lo + fraction * (hi - lo));
      }
      values[order[next]] = value;
      ++next;
    }
    return next < order.size();
  });
  // Rounding in the running sum can leave the top percentiles (100) just short: they belong to the
  // highest non-empty bucket.
  for (; next < order.size(); ++next) {
    values[order[next]] = method == PercentileMethod::kFio ? layout.ValueNs(last_nonempty)
                                                           : layout.UpperNs(last_nonempty);
  }
  return values;
}

template <typename Count>
HistogramStats StatsImpl(std::span<const Count> counts, const HistogramLayout& layout,
                         PercentileMethod method) {
  HistogramStats stats;
  long double samples = 0;
  long double weighted = 0;
  bool any = false;
  uint32_t lo = 0;
  uint32_t hi = 0;
  ForEachNonZero(counts, [&](uint32_t i, Count c) {
    const long double count = static_cast<long double>(c);
    if (!any) lo = i;
    any = true;
    hi = i;
    samples += count;
    weighted += count * layout.ValueNs(i);
    return true;
  });
  if (!any) return {0, kNaN, kNaN, kNaN};
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
  return PercentilesImpl(counts, layout, percentiles, method);
}

std::vector<double> ComputePercentiles(std::span<const double> counts,
                                       const HistogramLayout& layout,
                                       std::span<const double> percentiles,
                                       PercentileMethod method) {
  return PercentilesImpl(counts, layout, percentiles, method);
}

HistogramStats ComputeStats(std::span<const uint64_t> counts, const HistogramLayout& layout,
                            PercentileMethod method) {
  return StatsImpl(counts, layout, method);
}

HistogramStats ComputeStats(std::span<const double> counts, const HistogramLayout& layout,
                            PercentileMethod method) {
  return StatsImpl(counts, layout, method);
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
