#include "stats/core/histogram_layout.h"

#include <fmt/format.h>

#include <stdexcept>

namespace iotail::stats {

HistogramLayout::HistogramLayout(FioGeneration generation, int coarseness, int groups)
    : generation_(generation), coarseness_(coarseness), groups_(groups) {
  if (coarseness < 0 || coarseness > kMaxCoarseness) {
    throw std::invalid_argument(
        fmt::format("histogram coarseness {} is outside 0..{}", coarseness, kMaxCoarseness));
  }
  if (generation == FioGeneration::kFio3 && groups != kFio3Groups && groups != kWideGroups) {
    throw std::invalid_argument(
        fmt::format("histogram groups {}: expected {} or {}", groups, kFio3Groups, kWideGroups));
  }
}

HistogramLayout HistogramLayout::Fio3(int coarseness, int groups) {
  return HistogramLayout(FioGeneration::kFio3, coarseness, groups);
}

HistogramLayout HistogramLayout::Fio2(int coarseness) {
  return HistogramLayout(FioGeneration::kFio2, coarseness, kFio2Groups);
}

std::optional<HistogramLayout> HistogramLayout::FromColumnCount(size_t columns) {
  for (int c = 0; c <= kMaxCoarseness; ++c) {
    if (columns == (kFio3Buckets >> c)) return Fio3(c);
    if (columns == (kFio2Buckets >> c)) return Fio2(c);
    if (columns == (kWideBuckets >> c)) return Fio3(c, kWideGroups);
  }
  return std::nullopt;
}

uint32_t HistogramLayout::IndexOfNs(uint64_t ns) const {
  return FineBucketIndex(ns / unit_ns(), groups()) >> coarseness_;
}

double HistogramLayout::LowerNs(uint32_t i) const {
  return static_cast<double>(FineBucketLower(i << coarseness_) * unit_ns());
}

double HistogramLayout::UpperNs(uint32_t i) const {
  const uint32_t last_fine = ((i + 1) << coarseness_) - 1;
  return static_cast<double>(FineBucketUpper(last_fine) * unit_ns());
}

double HistogramLayout::ValueNs(uint32_t i) const {
  if (coarseness_ == 0) return static_cast<double>(FineBucketValue(i) * unit_ns());
  return (LowerNs(i) + UpperNs(i)) / 2;
}

std::string HistogramLayout::Describe() const {
  std::string name = generation_ == FioGeneration::kFio3 ? "fio3" : "fio2";
  if (generation_ == FioGeneration::kFio3 && groups_ != kFio3Groups) {
    name += fmt::format(",groups={}", groups_);
  }
  if (coarseness_ > 0) name += fmt::format(",coarseness={}", coarseness_);
  return name;
}

}  // namespace iotail::stats
