// PlotReport: the charts of `iotail plot` from merged histogram-log quanta (stats/analysis/merger):
// per direction, percentiles over time (p50, p99, p99.9, max by fio's rule, log scale, SLA targets
// as lines), a latency heat map (time x latency bins of four per power of two, counts as colour),
// IOPS and bandwidth over time, SLC factors over time, and the whole run's exceedance curve (the
// share of I/Os slower than each latency, log-log, from the exact integer totals). Given the
// quanta of `iotail run --explain`'s stage logs too (each stage's logs merged apart: AddStage), a
// stacked chart per direction of the stages' mean per quantum (schedule at the bottom, delivery on
// top), whose top is the mean latency of the I/Os --explain joined to their block requests. With
// stage quanta only (no latency logs), the report holds the stage charts alone.
//
// Add() takes the quanta in time order (as Merger::Run streams them), AddStage() each stage's in
// time order (stages in any order, before or after Add's); Finish() takes the exact whole-run
// histograms. Memory grows with the number of quanta (a few numbers per quantum and
// direction, plus heat-map columns merged down to at most kMaxHeatColumns). Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/sla.h"
#include "stats/record/explain_sink.h"

namespace iotail::stats {

struct PlotOptions {
  std::string title = "iotail latency report";
  std::string source;  // what was read (file count, layout), for the subtitle
  int64_t quantum_ms = 1000;
  std::vector<SlaTarget> sla;  // drawn on the percentile charts
};

struct NamedChart {
  std::string name;  // file-name friendly: "read-percentiles"
  std::string svg;
};

class PlotReport {
 public:
  static constexpr size_t kMaxHeatColumns = 300;

  PlotReport(HistogramLayout layout, PlotOptions options);

  // One quantum [start_ms, start_ms + quantum): weighted counts per direction (layout().size())
  // and the bytes they moved (see MergedQuantum::bytes).
  void Add(int64_t start_ms, const std::array<std::span<const double>, kDirectionCount>& counts,
           const std::array<double, kDirectionCount>& bytes,
           const std::array<bool, kDirectionCount>& present);
  // One quantum of the logs of an --explain stage (PREFIX_explain_<stage>_hist.N.log, merged apart
  // from the latency logs; `layout` is theirs): the stage's mean per direction present, from the
  // buckets' representative values as pctiles' mean (NaN in a quantum without I/O: a gap).
  void AddStage(Stage stage, const HistogramLayout& layout, int64_t start_ms,
                const std::array<std::span<const double>, kDirectionCount>& counts,
                const std::array<bool, kDirectionCount>& present);
  // The exact whole-run histogram of each direction present; whether the bytes were known for
  // every record (else no bandwidth chart: see Merger::bytes_known); where the data ends
  // (Merger::data_end_ms): a last quantum the records cover only in part (a run's final, partial
  // interval) has its IOPS and bandwidth rated over the time they cover, not the whole quantum,
  // and the heat map's time axis ends there.
  void Finish(const std::array<const Histogram*, kDirectionCount>& totals, bool bytes_known,
              int64_t data_end_ms);

  std::vector<NamedChart> Charts() const;
  // One self-contained HTML page holding every chart inline.
  std::string Html() const;

 private:
  struct Direction_ {
    bool present = false;
    std::vector<double> t_s, samples, mib_s, p50, p99, p999, max, slc1, slc2;
    std::vector<std::vector<double>> heat;  // per column: counts per latency bin
    std::vector<double> heat_t0;            // start time of each column
    const Histogram* total = nullptr;
  };
  // A direction's stage means (seconds) per quantum start; NaN: the stage has no value there.
  struct StageMeans {
    std::map<int64_t, std::array<double, kStageCount>> by_start_ms;
    std::array<bool, kStageCount> has{};
  };
  size_t BinOf(uint32_t bucket) const;
  std::optional<NamedChart> StageChart(int direction, int64_t origin_ms) const;
  double BinLower(size_t bin) const;

  HistogramLayout layout_;
  PlotOptions options_;
  std::optional<int64_t> first_ms_;
  int64_t last_ms_ = 0;      // the end of the last quantum
  int64_t data_end_ms_ = 0;  // the end of the data (at most last_ms_)
  bool bytes_known_ = false;
  size_t merge_ = 1;  // quanta per heat-map column (doubles when columns run out)
  std::array<Direction_, kDirectionCount> dirs_;
  std::array<StageMeans, kDirectionCount> stages_;
};

}  // namespace iotail::stats
