#include "stats/core/histogram_layout.h"

#include <fmt/format.h>

#include <stdexcept>

namespace iotail::stats {

HistogramLayout::HistogramLayout(FioGeneration generation, int coarseness)
    : generation_(generation), coarseness_(coarseness) {
  if (coarseness < 0 || coarseness > kMaxCoarseness) {
    throw std::invalid_argument(
        fmt::format("histogram coarseness {} is outside 0..{}", coarseness, kMaxCoarseness));
  }
}

HistogramLayout HistogramLayout::Fio3(int coarseness) {
  return HistogramLayout(FioGeneration::kFio3, coarseness);
}

HistogramLayout HistogramLayout::Fio2(int coarseness) {
  return HistogramLayout(FioGeneration::kFio2, coarseness);
}

std::optional<HistogramLayout> HistogramLayout::FromColumnCount(size_t columns) {
  for (int c = 0; c <= kMaxCoarseness; ++c) {
    if (columns == (kFio3Buckets >> c)) return Fio3(c);
    if (columns == (kFio2Buckets >> c)) return Fio2(c);
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
  if (coarseness_ > 0) name += fmt::format(",coarseness={}", coarseness_);
  return name;
}

}  // namespace iotail::stats
