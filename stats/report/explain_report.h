// The reports of --explain (stats/record/explain_sink.h): per job and direction, "where the time
// went" in the text summary (each stage's mean, p50 and p99 by fio's rule and its share of the mean
// latency), and in the JSON each job's "iotail_explain" -> direction -> "stages" -> stage, with
// fio's keys of a latency ("min", "max", "mean", "stddev", "N", the "percentile" map, in ns, and
// in json+ the "bins"), plus the I/Os joined, not joined and split. Pure functions of their
// arguments; thread-safe.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "stats/core/sla.h"
#include "stats/record/explain_sink.h"

namespace iotail::stats {

// For a violated --sla target, the stage whose mean grew most between the run's first intervals
// and the violating ones.
struct SlaStageNote {
  std::string target;
  Stage stage = Stage::kDevice;
  double first_mean_ns = 0;      // over the first intervals (up to 3, at most a quarter of them)
  double violating_mean_ns = 0;  // over the intervals holding the violations the checker kept
  size_t first_intervals = 0, violating_intervals = 0;
};

// The run-wide facts the reports say once.
struct ExplainNote {
  bool asked = false;
  std::string attachment;  // how the kernel's view attached, "" without one
  std::string why_not;     // why there is none
  uint64_t requests_unmatched = 0;
  uint64_t records_dropped = 0;
  std::vector<SlaStageNote> sla;  // one per violated target the stages can speak for
};

// The notes for every violated target of `sla` from the intervals' stage sums (in time order; the
// checker's violation times count in ms from the first interval's start, as the live report's).
// A target whose violating intervals were not explained, or a run of one interval, gets none.
std::vector<SlaStageNote> SlaStageGrowth(std::span<const ExplainIntervalSums> history,
                                         const SlaChecker& sla);

// `"iotail_explain": {...}` (no separators) for a job; with `bins` (json+), each stage's nonzero
// buckets as fio's json+ "bins" of a latency (bucket value in ns: count).
void AppendExplainJson(std::string& out, const ExplainTotals& totals,
                       std::span<const double> percentiles, bool bins = false);
// `"explain": {...}` (no separators) for iotail_run.
void AppendExplainNoteJson(std::string& out, const ExplainNote& note);
// "SLA TARGET: the stage that grew most is ..." lines, one per note.
void AppendSlaStageText(std::string& out, const ExplainNote& note);
// The text table of a job (nothing when no I/O was explained).
void AppendExplainText(std::string& out, const ExplainTotals& totals);

}  // namespace iotail::stats
