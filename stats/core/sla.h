// SLA targets on latency: parsing ("read:p99<=2ms", "write:p99.9<=10ms", "p50<=300us",
// "all:max<1s") and checking intervals against them.
//
// Grammar: [DIR:]METRIC OP VALUE[UNIT]. DIR is read, write, trim or all (all directions combined);
// without DIR a target applies to each direction on its own. METRIC is pN (a percentile, 0..100),
// mean or max. OP is <= or <. UNIT is ns, us, ms or s (default us, like fio's latency targets).
// A percentile is computed by the checker's percentile rule (PercentileMethod), from the same
// histogram an interval row shows, so a verdict always matches the printed numbers. Intervals
// without samples are not checked.
//
// SlaChecker counts, per target, the intervals checked and violated and keeps the times of the
// first violations. Its owner may name the latency it is given (SetLatency: "clat", "olat"...);
// the summary and the JSON then say which latency the verdicts are on. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/percentiles.h"

namespace iotail::stats {

struct SlaTarget {
  std::string text;                    // as given
  std::optional<Direction> direction;  // nullopt: each direction (or all, see combined)
  bool combined = false;               // DIR was "all"
  enum class Metric { kPercentile, kMean, kMax } metric = Metric::kPercentile;
  double percentile = 0;
  bool inclusive = true;  // <= rather than <
  double limit_ns = 0;

  // Whether `value_ns` meets the target.
  bool Met(double value_ns) const { return inclusive ? value_ns <= limit_ns : value_ns < limit_ns; }
};

// Parses one target per argument (an argument may also hold several separated by ',');
// throws UsageError naming `option` and the bad target.
std::vector<SlaTarget> ParseSlaTargets(std::span<const std::string> args, std::string_view option);

class SlaChecker {
 public:
  static constexpr size_t kTimesKept = 20;
  struct Result {
    uint64_t checked = 0;
    uint64_t violated = 0;
    std::vector<int64_t> times;  // start times of the first violating intervals
    double worst_ns = 0;         // the worst value seen in a violating interval
  };

  SlaChecker(std::vector<SlaTarget> targets, PercentileMethod method);

  // Checks one interval of direction `dir_name` ("read", "write", "trim" or "all"); returns the
  // targets it violates, as text joined by ' ' (empty if none).
  std::string Check(int64_t time_ms, std::string_view dir_name, std::span<const double> counts,
                    const HistogramLayout& layout);

  bool empty() const { return targets_.empty(); }
  // Names the latency the checked histograms hold, for the summary and the JSON (empty: unnamed).
  void SetLatency(std::string name) { latency_ = std::move(name); }
  const std::string& latency() const { return latency_; }
  bool AnyViolated() const;
  const std::vector<SlaTarget>& targets() const { return targets_; }
  const std::vector<Result>& results() const { return results_; }

  // A readable summary: one line per target with counts and the first violation times.
  void WriteSummary(std::ostream& out, std::string_view time_label) const;
  // The same as a JSON array.
  void WriteJson(std::ostream& out) const;

 private:
  std::vector<SlaTarget> targets_;
  PercentileMethod method_;
  std::vector<Result> results_;
  std::string latency_;
};

}  // namespace iotail::stats
