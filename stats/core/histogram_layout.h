// HistogramLayout: fio's log-linear latency bucket layout, exactly as fio computes it.
//
// fio 3 counts nanoseconds in 29 groups of 64 buckets (1856 buckets); fio 2 counted microseconds
// in 19 groups (1216 buckets). Groups 0 and 1 are exact (width 1); group g >= 2 covers
// [2^(g+5), 2^(g+6)) in 64 buckets of width 2^(g-1). Values at or above the top are clamped into
// the last bucket. A histogram log written with log_hist_coarseness=c sums runs of 2^c adjacent
// buckets, so it has (1856 >> c) or (1216 >> c) columns; the column count alone identifies the
// generation and the coarseness (see FromColumnCount).
//
// Beyond fio: a fio 3 layout may have more groups (up to kWideGroups = 59, which covers every
// 64-bit nanosecond value, so nothing is clamped). iotail's recorders count in that wide layout,
// so latencies above fio's top (2^34 ns, 17.18 s) stay exact in summaries; its histogram logs are
// written with fio's 29 groups unless --log_hist_groups=59 asks for the wide layout. A wide log
// has 3776 >> c columns, a count no fio layout has, so FromColumnCount tells it apart. Group counts
// between 29 and 59 are not offered: they would save little and some (38 and 58 groups, coarse)
// have as many columns as fio's own layouts, which no reader could tell apart.
//
// All bounds and values returned here are in nanoseconds, whatever the generation.
// A layout is a small immutable value; copy it freely. Thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace iotail::stats {

inline constexpr int kBucketBits = 6;
inline constexpr uint32_t kBucketsPerGroup = 1u << kBucketBits;  // 64
inline constexpr int kFio3Groups = 29;
inline constexpr int kFio2Groups = 19;
inline constexpr uint32_t kFio3Buckets = kFio3Groups * kBucketsPerGroup;  // 1856
inline constexpr uint32_t kFio2Buckets = kFio2Groups * kBucketsPerGroup;  // 1216
inline constexpr int kMaxCoarseness = 6;
inline constexpr int kWideGroups = 59;  // [2^63, 2^64) is group 58
inline constexpr uint32_t kWideBuckets = kWideGroups * kBucketsPerGroup;  // 3776
// The layout every Recorder counts in (fine, kWideGroups groups): no latency is ever clamped.
inline constexpr int kRecordGroups = kWideGroups;
inline constexpr uint32_t kRecordBuckets = kWideBuckets;

// Index of value v in a fine (coarseness 0) layout with `groups` groups. Exactly fio's rule,
// including the clamp into the last bucket.
constexpr uint32_t FineBucketIndex(uint64_t v, int groups) {
  if (v < 2 * kBucketsPerGroup) return static_cast<uint32_t>(v);
  const int msb = 63 - __builtin_clzll(v);
  const int error_bits = msb - kBucketBits;
  const uint64_t index =
      static_cast<uint64_t>(error_bits + 1) * kBucketsPerGroup + ((v >> error_bits) & 63);
  const uint64_t last = static_cast<uint64_t>(groups) * kBucketsPerGroup - 1;
  return static_cast<uint32_t>(index > last ? last : index);
}

// Hot-path helpers for fio 3 nanosecond latencies: fio's own layout (clamped at 17.18 s) and the
// recorders' wide one (never clamped).
constexpr uint32_t Fio3BucketIndex(uint64_t ns) { return FineBucketIndex(ns, kFio3Groups); }
constexpr uint32_t RecordBucketIndex(uint64_t ns) { return FineBucketIndex(ns, kRecordGroups); }

// Lower bound of fine bucket i, in the layout's own unit.
constexpr uint64_t FineBucketLower(uint32_t i) {
  if (i < 2 * kBucketsPerGroup) return i;
  const uint32_t error_bits = (i >> kBucketBits) - 1;
  return (uint64_t{1} << (error_bits + kBucketBits)) +
         static_cast<uint64_t>(i & (kBucketsPerGroup - 1)) * (uint64_t{1} << error_bits);
}

// Upper bound (exclusive) of fine bucket i, in the layout's own unit. The last bucket really
// extends to infinity; this returns its nominal upper edge.
constexpr uint64_t FineBucketUpper(uint32_t i) {
  if (i < 2 * kBucketsPerGroup) return uint64_t{i} + 1;
  return FineBucketLower(i) + (uint64_t{1} << ((i >> kBucketBits) - 1));
}

// The value fio prints for fine bucket i (plat_idx_to_val): i itself in the exact groups, else the
// midpoint of the bucket. Always an integer, in the layout's own unit.
constexpr uint64_t FineBucketValue(uint32_t i) {
  if (i < 2 * kBucketsPerGroup) return i;
  return FineBucketLower(i) + (uint64_t{1} << ((i >> kBucketBits) - 2));
}

enum class FioGeneration { kFio2, kFio3 };

class HistogramLayout {
 public:
  // fio 3 (ns) or fio 2 (us) layout at the given coarseness (0..kMaxCoarseness). A fio 3 layout
  // has kFio3Groups or kWideGroups groups (std::invalid_argument otherwise).
  static HistogramLayout Fio3(int coarseness = 0, int groups = kFio3Groups);
  static HistogramLayout Fio2(int coarseness = 0);
  // The recorders' layout: fio 3, fine, kRecordGroups groups.
  static HistogramLayout Recorded() { return Fio3(0, kRecordGroups); }
  // The layout of a histogram log with this many bucket columns (fio 3, fio 2 or wide, at any
  // coarseness), or nullopt if none produces that count.
  static std::optional<HistogramLayout> FromColumnCount(size_t columns);

  FioGeneration generation() const { return generation_; }
  int coarseness() const { return coarseness_; }
  int groups() const { return groups_; }
  // Number of buckets (columns) of this layout.
  uint32_t size() const { return fine_size() >> coarseness_; }
  uint32_t fine_size() const { return static_cast<uint32_t>(groups()) * kBucketsPerGroup; }
  // Nanoseconds per unit of the layout: 1 for fio 3, 1000 for fio 2.
  uint64_t unit_ns() const { return generation_ == FioGeneration::kFio3 ? 1 : 1000; }

  // Index of a latency in nanoseconds (fio 2 layouts truncate to microseconds first, as fio 2 did).
  uint32_t IndexOfNs(uint64_t ns) const;
  // Bounds of bucket i in ns: [LowerNs, UpperNs). The last bucket's true upper bound is infinite.
  double LowerNs(uint32_t i) const;
  double UpperNs(uint32_t i) const;
  // The representative value of bucket i in ns. At coarseness 0 this is fio's printed value
  // (plat_idx_to_val); at coarseness c > 0 it is the midpoint of the 2^c merged buckets.
  double ValueNs(uint32_t i) const;

  // "fio3" or "fio2", plus ",groups=G" when G is not fio's and ",coarseness=c" when c > 0.
  std::string Describe() const;

  bool operator==(const HistogramLayout&) const = default;

 private:
  HistogramLayout(FioGeneration generation, int coarseness, int groups);
  FioGeneration generation_;
  int coarseness_;
  int groups_;
};

}  // namespace iotail::stats
