// PctilesReport: writes per-interval latency statistics (samples, min, max, mean, percentiles,
// SLC factors) as a readable table, CSV or JSON, streaming its rows (in blocks of 32 KiB).
//
// Column names are stable and shared by CSV and JSON: time_ms (interval start; "total" on
// whole-run rows), dir (read, write, trim or all), samples, min, max, mean, one p<percentile>
// column per requested percentile (p50, p99.9), then slc1, slc2 (SBK's integer form) and
// slc1_mean, slc2_mean, and `sla` when SLA targets are checked. With a confidence level
// (ReportOptions::ci, e.g. 95), each percentile column is followed by its order-statistic
// confidence interval, p50_lo and p50_hi (stats/core/percentile_ci.h; an open upper bound is inf in
// the table and CSV, null in JSON); without it the output is as before, byte for byte. Latencies
// are printed in the chosen unit; an interval without samples has empty (CSV), null (JSON) or "-"
// (table) statistics. Not thread-safe; one report per stream.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/core/histogram_layout.h"
#include "stats/core/percentile_ci.h"
#include "stats/core/percentiles.h"
#include "stats/core/sla.h"
#include "stats/core/slc.h"

namespace iotail::stats {

enum class ReportFormat { kTable, kCsv, kJson };
enum class LatencyUnit { kNs, kUs, kMs };

// Parse "table|csv|json" and "ns|us|ms" (also nsec, usec, msec); UsageError naming `option`.
ReportFormat ParseReportFormat(std::string_view text, std::string_view option);
LatencyUnit ParseLatencyUnit(std::string_view text, std::string_view option);
std::string_view LatencyUnitName(LatencyUnit unit);
double NsPerUnit(LatencyUnit unit);

struct ReportOptions {
  ReportFormat format = ReportFormat::kTable;
  LatencyUnit unit = LatencyUnit::kUs;
  PercentileMethod method = PercentileMethod::kFio;
  std::vector<double> percentiles;      // shown columns
  std::vector<double> slc_percentiles;  // ascending; SBK's list by default
  std::string slc_list_name;            // "sbk", "paper" or "custom", for the header
  bool sla_column = false;              // add an `sla` column: the targets a row violates
  double ci = 0;  // confidence level in percent of the percentiles' intervals (0: none)
};

// One row's statistics, in ns.
struct IntervalStats {
  HistogramStats stats;
  std::vector<double> percentiles;            // matching ReportOptions::percentiles
  std::vector<PercentileInterval> intervals;  // the same, with ReportOptions::ci (else empty)
  SlcFactors slc;
};

// Computes a row from bucket counts (integer or weighted) by the report's rules.
IntervalStats ComputeIntervalStats(std::span<const double> counts, const HistogramLayout& layout,
                                   const ReportOptions& options);
IntervalStats ComputeIntervalStats(std::span<const uint64_t> counts, const HistogramLayout& layout,
                                   const ReportOptions& options);

class PctilesReport {
 public:
  // `context` lines (files, layout, quantum, time base) go into the table's preamble and JSON's
  // metadata as "key" = value pairs.
  PctilesReport(std::ostream& out, ReportOptions options,
                std::vector<std::pair<std::string, std::string>> context);
  // Writes the rows not written yet (rows leave in 32 KiB blocks): a run that stops on an error
  // still shows the rows made before it.
  ~PctilesReport();
  PctilesReport(const PctilesReport&) = delete;
  PctilesReport& operator=(const PctilesReport&) = delete;
  // Writes the header (CSV header row, table preamble and header, JSON opening).
  void Begin();
  // One interval row; time_ms nullopt marks a whole-run row.
  // `sla` is the text of the targets the row violates (only with sla_column).
  void Row(std::optional<int64_t> time_ms, std::string_view dir, const IntervalStats& row,
           std::string_view sla = {});
  // Row in two steps, for a caller that formats rows in parallel and writes them in order: the
  // row's text (const: callable from several threads at once), then writing it, `total` for a
  // whole-run row.
  std::string FormatRow(std::optional<int64_t> time_ms, std::string_view dir,
                        const IntervalStats& row, std::string_view sla = {}) const;
  void WriteRow(bool total, std::string_view text);
  // Closes the output (JSON closing brackets). With an SLA checker, the table ends with its
  // summary and the JSON object holds it under "sla"; CSV leaves it to the caller.
  void End(const SlaChecker* sla = nullptr);

 private:
  static constexpr size_t kPendingBytes = size_t{1} << 15;
  void WritePending();
  std::ostream& out_;
  ReportOptions options_;
  std::vector<std::pair<std::string, std::string>> context_;
  std::vector<std::string> columns_;
  bool in_totals_ = false;
  bool first_row_ = true;
  std::string pending_;  // rows not yet written (WriteRow)
};

}  // namespace iotail::stats
