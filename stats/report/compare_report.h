// CompareReport: the output of `iotail compare A B`, as a readable table or as JSON. One row per
// direction and percentile: A's and B's estimates, the difference B - A with its confidence
// interval and its share of A, the verdict (stats/core/percentile_compare.h) and how the interval
// was found ("order statistics" on the pooled counts of each side, "t over repetitions", or
// "printed percentiles" of summaries without bins: no interval, verdict "no interval", and a line
// after the table saying why); then one line per --fail-on check (allowed margin against the
// interval's lower bound).
//
// JSON keys: confidence (percent), unit, a and b ({"input", "repetitions", and "what" when the
// side says what latency it is}), notes[] (when any), rows[] ({dir,
// percentile, samples_a, samples_b, method, a, b, diff, diff_lower, diff_upper, change_pct,
// verdict}; latencies in the chosen unit, an open bound null), fail_on[] ({target, dir, allowed,
// diff_lower, failed}). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "stats/core/percentile_compare.h"
#include "stats/report/pctiles_report.h"

namespace iotail::stats {

struct CompareSideInfo {
  std::string input;  // as given on the command line
  size_t repetitions = 0;
  std::string what;  // what latency the side is, when not plain (compare --recorded); "" else
};

struct CompareRow {
  std::string dir;
  double percentile = 0;
  uint64_t samples_a = 0, samples_b = 0;
  bool repetitions = false;  // Welch's t over repetitions (else order statistics)
  bool printed = false;      // the percentiles printed by summaries without bins: no interval
  PercentileComparison comparison;
};

struct FailOnCheck {
  std::string target;  // as given ("p99:+10%")
  std::string dir;
  double allowed_ns = 0;     // the margin B - A may reach
  double diff_lower_ns = 0;  // the interval's lower bound
  bool failed = false;       // diff_lower_ns > allowed_ns: B significantly worse than allowed
};

struct CompareResult {
  double confidence = 0.95;
  CompareSideInfo a, b;
  std::vector<CompareRow> rows;
  std::vector<FailOnCheck> checks;
  std::vector<std::string> notes;  // said after the sides (text: "# note: ..."; JSON "notes")
};

void WriteCompareText(std::ostream& out, const CompareResult& result, LatencyUnit unit);
void WriteCompareJson(std::ostream& out, const CompareResult& result, LatencyUnit unit);

}  // namespace iotail::stats
