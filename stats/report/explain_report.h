// The reports of --explain (stats/record/explain_sink.h): per job and direction, "where the time
// went" in the text summary (each stage's mean, p50 and p99 by fio's rule and its share of the mean
// latency), and in the JSON each job's "iotail_explain" -> direction -> "stages" -> stage, with
// fio's keys of a latency ("min", "max", "mean", "stddev", "N" and the "percentile" map, in ns),
// plus the I/Os joined, not joined and split. Pure functions of their arguments; thread-safe.
#pragma once

#include <span>
#include <string>

#include "stats/record/explain_sink.h"

namespace iotail::stats {

// The run-wide facts the reports say once.
struct ExplainNote {
  bool asked = false;
  std::string attachment;  // how the kernel's view attached, "" without one
  std::string why_not;     // why there is none
  uint64_t requests_unmatched = 0;
  uint64_t records_dropped = 0;
};

// `"iotail_explain": {...}` (no separators) for a job.
void AppendExplainJson(std::string& out, const ExplainTotals& totals,
                       std::span<const double> percentiles);
// `"explain": {...}` (no separators) for iotail_run.
void AppendExplainNoteJson(std::string& out, const ExplainNote& note);
// The text table of a job (nothing when no I/O was explained).
void AppendExplainText(std::string& out, const ExplainTotals& totals);

}  // namespace iotail::stats
