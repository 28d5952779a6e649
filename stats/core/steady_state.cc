#include "stats/core/steady_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "stats/core/errors.h"
#include "stats/util/option_text.h"

namespace iotail::stats {

std::string SteadyStateCriterion::Describe() const {
  const char* name = metric == SteadyMetric::kIops ? "iops"
                     : metric == SteadyMetric::kBw ? "bw"
                                                   : "lat";
  // fio formats the limit as a float with %f.
  return fmt::format("{}{}:{:f}{}", name, slope ? "_slope" : "", static_cast<float>(limit),
                     percent ? "%" : "");
}

SteadyStateCriterion ParseSteadyStateCriterion(
    std::string_view text, std::string_view option,
    const std::function<uint64_t(std::string_view, std::string_view)>& parse_bytes) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  SteadyStateCriterion c;
  if (name == "iops" || name == "iops_slope") {
    c.metric = SteadyMetric::kIops;
  } else if (name == "bw" || name == "bw_slope") {
    c.metric = SteadyMetric::kBw;
  } else if (name == "lat" || name == "lat_slope") {
    c.metric = SteadyMetric::kLat;
  } else {
    throw UsageError(fmt::format(
        "--{}: expected iops, iops_slope, bw, bw_slope, lat or lat_slope, then :LIMIT, got '{}'",
        option, text));
  }
  c.slope = name.ends_with("_slope");
  if (colon == std::string_view::npos || colon + 1 == text.size()) {
    throw UsageError(
        fmt::format("--{}: the threshold must be given with the criterion ({}:LIMIT, e.g. {}:1%)",
                    option, name, name));
  }
  std::string_view limit = text.substr(colon + 1);
  c.percent = limit.ends_with('%');
  if (c.percent) limit.remove_suffix(1);
  if (c.percent || c.metric != SteadyMetric::kBw) {
    const std::optional<double> v = ParseFiniteDouble(limit);
    if (!v || *v < 0) {
      throw UsageError(fmt::format("--{}: '{}' is not a threshold (a number, or a percentage)",
                                   option, text.substr(colon + 1)));
    }
    c.limit = *v;
  } else {
    c.limit = static_cast<double>(parse_bytes(limit, option));
  }
  return c;
}

namespace {
uint64_t MeanOf(const std::vector<uint64_t>& v) {
  if (v.empty()) return 0;
  uint64_t sum = 0;
  for (uint64_t x : v) sum += x;
  return sum / v.size();
}
}  // namespace

uint64_t SteadyStateResult::IopsMean() const { return MeanOf(iops); }
uint64_t SteadyStateResult::BwMean() const { return MeanOf(bw); }
uint64_t SteadyStateResult::LatMean() const { return MeanOf(lat); }

SteadyStateWindow::SteadyStateWindow(const SteadyStateCriterion& criterion, uint32_t size,
                                     uint32_t duration_s)
    : criterion_(criterion),
      size_(std::max<uint32_t>(size, 1)),
      iops_(size_, 0),
      bw_(size_, 0),
      lat_(size_, 0) {
  result_.criterion = criterion;
  result_.duration_s = duration_s;
  result_.iops.assign(size_, 0);
  result_.bw.assign(size_, 0);
  result_.lat.assign(size_, 0);
}

uint64_t SteadyStateWindow::Value(size_t slot) const {
  switch (criterion_.metric) {
    case SteadyMetric::kIops:
      return iops_[slot];
    case SteadyMetric::kBw:
      return bw_[slot];
    case SteadyMetric::kLat:
      return lat_[slot];
  }
  return 0;
}

bool SteadyStateWindow::Add(uint64_t iops, uint64_t bw, uint64_t lat_ns) {
  if (result_.attained) return true;
  const size_t slot = added_ % size_;
  iops_[slot] = iops;
  bw_[slot] = bw;
  lat_[slot] = lat_ns;
  ++added_;
  // The window as reported: oldest first, unfilled slots (zeros) last.
  const size_t oldest = added_ >= size_ ? added_ % size_ : 0;
  for (size_t i = 0; i < size_; ++i) {
    const size_t s = (oldest + i) % size_;
    result_.iops[i] = iops_[s];
    result_.bw[i] = bw_[s];
    result_.lat[i] = lat_[s];
  }
  if (added_ < size_) return false;

  // Sums over the window in time order, x = 0 for the oldest: exact integers as fio's.
  const double n = static_cast<double>(size_);
  uint64_t sum_y = 0, sum_xy = 0;
  for (size_t i = 0; i < size_; ++i) {
    const uint64_t y = Value((oldest + i) % size_);
    sum_y += y;
    sum_xy += i * y;
  }
  const double mean = static_cast<double>(sum_y) / n;
  double figure = 0;
  if (criterion_.slope) {
    const uint64_t sum_x = size_ * (size_ - 1) / 2;
    const uint64_t sum_x_sq = (size_ - 1) * size_ * (2 * size_ - 1) / 6;
    const double sx = static_cast<double>(sum_x);
    // One measurement has no slope: fio divides 0 by 0 (NaN, never below a limit).
    result_.slope = (static_cast<double>(sum_xy) - sx * static_cast<double>(sum_y) / n) /
                    (static_cast<double>(sum_x_sq) - sx * sx / n);
    figure = criterion_.percent ? 100.0 * result_.slope / mean : result_.slope;
  } else {
    double deviation = 0;
    for (size_t s = 0; s < size_; ++s) {
      deviation = std::max(deviation, std::fabs(static_cast<double>(Value(s)) - mean));
    }
    result_.max_deviation = deviation;
    figure = criterion_.percent ? 100.0 * deviation / mean : deviation;
  }
  result_.figure = figure;
  result_.attained = std::fabs(figure) < criterion_.limit;
  return result_.attained;
}

}  // namespace iotail::stats
