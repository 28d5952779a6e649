// Steady state: fio's steadystate criterion over a rolling window of equally spaced measurements
// (fio's steadystate.c, 3.33, plus the newer lat criterion).
//
// A measurement is one check interval's IOPS and bandwidth (bytes/s) and the mean completion
// latency so far (ns). The window holds the last `size` of them. Once it is full, every new one
// is judged by the criterion: the mean deviation criteria (iops, bw, lat) take the largest
// |value - window mean|; the slope criteria (iops_slope, bw_slope, lat_slope) the least-squares
// slope over x = 0, 1, ..., size - 1. With a percentage limit the figure is 100 * it / window mean
// (a slope keeps its sign); the state is attained once |figure| is below the limit. Whole numbers
// as fio keeps them: a measurement is truncated to an integer, sums are exact integers.
// SteadyStateWindow is a plain value; not thread-safe (one monitor thread owns it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace iotail::stats {

enum class SteadyMetric { kIops, kBw, kLat };

struct SteadyStateCriterion {
  SteadyMetric metric = SteadyMetric::kIops;
  bool slope = true;
  double limit = 0.01;  // fio's default: iops_slope:0.01%
  bool percent = true;
  // As fio's JSON "ss" writes it: "iops_slope:0.010000%", "bw:1048576.000000".
  std::string Describe() const;
  bool operator==(const SteadyStateCriterion&) const = default;
};

// Parses fio's steadystate value: iops|iops_slope|bw|bw_slope|lat|lat_slope, a colon, then the
// limit: a number followed by % (of the window's mean), or a plain number (IOPS, or ns for lat);
// for bw a plain limit is bytes/s, read by `parse_bytes` (fio's sizes, under kb_base). Throws
// UsageError naming `option`.
SteadyStateCriterion ParseSteadyStateCriterion(
    std::string_view text, std::string_view option,
    const std::function<uint64_t(std::string_view, std::string_view)>& parse_bytes);

// What a job (or its reporting group) ended with: fio's JSON "steadystate" section and the text
// "steadystate  :" line.
struct SteadyStateResult {
  SteadyStateCriterion criterion;
  uint32_t duration_s = 0;  // the window's length in seconds (fio's ss_dur)
  bool attained = false;
  double figure = 0;         // the last judged figure (fio's "criterion"), in % when percent
  double max_deviation = 0;  // the last judged largest deviation (deviation criteria)
  double slope = 0;          // the last judged slope (slope criteria)
  std::vector<uint64_t> iops, bw, lat;  // the window, oldest first (zeros where not yet measured)
  uint64_t IopsMean() const;            // over the whole window (fio divides by its length)
  uint64_t BwMean() const;
  uint64_t LatMean() const;
};

class SteadyStateWindow {
 public:
  // size: measurements in the window (ss_dur / ss_interval; at least 1).
  SteadyStateWindow(const SteadyStateCriterion& criterion, uint32_t size, uint32_t duration_s);
  // Adds one measurement; true once the criterion holds (the window is full and the figure is
  // below the limit), after which the result is final.
  bool Add(uint64_t iops, uint64_t bw, uint64_t lat_ns);
  const SteadyStateResult& result() const { return result_; }

 private:
  uint64_t Value(size_t slot) const;

  SteadyStateCriterion criterion_;
  size_t size_;
  size_t added_ = 0;  // measurements so far (the oldest is at added_ % size_ once full)
  std::vector<uint64_t> iops_, bw_, lat_;  // ring buffers
  SteadyStateResult result_;
};

}  // namespace iotail::stats
