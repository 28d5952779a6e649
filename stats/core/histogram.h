// Histogram: bucket counts over a HistogramLayout, with integer counts (Histogram: what a
// recorder or a log line holds) or fractional counts (WeightedHistogram: what time alignment
// produces when a log interval is split over several quanta).
//
// A histogram owns its counts; it is a value type, not thread-safe. The layout is not stored:
// callers keep the layout beside the histogram (all histograms of one analysis share one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iotail::stats {

template <typename Count>
class BasicHistogram {
 public:
  BasicHistogram() = default;
  explicit BasicHistogram(size_t buckets) : counts_(buckets, Count{0}) {}

  size_t size() const { return counts_.size(); }
  std::span<const Count> counts() const { return counts_; }
  std::span<Count> mutable_counts() { return counts_; }
  Count operator[](size_t i) const { return counts_[i]; }

  void Add(size_t index, Count n = 1) { counts_[index] += n; }

  // Adds other's counts bucket by bucket, each multiplied by weight. Sizes must match.
  template <typename Other>
  void Merge(std::span<const Other> other, double weight) {
    for (size_t i = 0; i < counts_.size(); ++i) {
      counts_[i] += static_cast<Count>(static_cast<double>(other[i]) * weight);
    }
  }
  template <typename Other>
  void Merge(std::span<const Other> other) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += static_cast<Count>(other[i]);
  }
  template <typename Other>
  void Merge(const BasicHistogram<Other>& other) {
    Merge(other.counts());
  }

  Count Total() const {
    Count total{0};
    for (Count c : counts_) total += c;
    return total;
  }
  bool Empty() const {
    for (Count c : counts_) {
      if (c != Count{0}) return false;
    }
    return true;
  }
  void Clear() { counts_.assign(counts_.size(), Count{0}); }
  void Resize(size_t buckets) { counts_.assign(buckets, Count{0}); }

  bool operator==(const BasicHistogram&) const = default;

 private:
  std::vector<Count> counts_;
};

using Histogram = BasicHistogram<uint64_t>;
using WeightedHistogram = BasicHistogram<double>;

}  // namespace iotail::stats
