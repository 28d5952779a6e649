// LiveReport: the running report of `iotail run`, one line per status interval, and the
// per-interval SLA check.
//
// An IntervalSink: the interval clock hands it every closed interval (its bounds and one delta per
// worker); it adds them up until the end of a status interval (an epoch multiple of period_ms,
// which must be a multiple of the clock's period) or the run's final partial interval, then writes
// one line for that span alone (not cumulative; a line per direction when there are several):
// elapsed time, per direction IOPS, MB/s, p50/p99/p99.9 (fio's rule) and SLC1/SLC2 (SBK's list),
// then "partial" with the span's real length when it is shorter than the period (rates are always
// over the real length), I/Os issued late (rate-limited mode), progress (time or bytes left) and
// the SLA targets the span violated (a final span under a quarter period, after others, the
// drain of a run that ended on a boundary, is checked but has no text line). The first text line
// explains the columns. In the rate-limited
// mode the latency shown and checked is olat, the open-loop latency (intended start to completion:
// what a user of the load would see), with clat p99 beside it; otherwise clat. The text form is a
// plain line (also on a terminal, so a log of it reads the same); the JSON form is one object per
// line. Every span with samples is checked against the SlaChecker, if given, per direction and for
// "all" combined; interval times given to the checker are the span's start in ms since the run's
// start.
//
// Not thread-safe: used by the clock thread, then (final interval) by the thread calling Finish.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/sla.h"
#include "stats/record/interval_sink.h"
#include "stats/record/recorder.h"

namespace iotail::stats {

enum class LiveFormat { kText, kJson, kNone };

struct LiveReportOptions {
  LiveFormat format = LiveFormat::kText;
  uint32_t period_ms = 1000;      // status interval
  uint64_t run_start_ns = 0;      // epoch ns where recording starts (0: the first interval's start)
  uint64_t runtime_ns = 0;        // planned recorded duration (0: ends by size)
  bool schedule_latency = false;  // rate-limited: report and check olat rather than clat
  std::vector<Direction> directions;
  // On a terminal: one status line (progress bar, time left, each direction's IOPS, p99 and SLC of
  // the last clock interval) redrawn in place below the scrolling lines at every clock interval,
  // as fio's eta line; erased at the end. Text format only.
  bool status_line = false;
  std::string scope;  // what the lines cover when not one host, e.g. "4 ranks" (in the legend)
  size_t status_columns = 120;  // the terminal's width (capped at kMaxColumns)
};

class LiveReport final : public IntervalSink {
 public:
  // Text lines are kept within this many columns: several directions get a line each, and what
  // does not fit (partial interval, late I/Os, errors, progress, SLA verdicts) a line of its own.
  static constexpr size_t kMaxColumns = 120;

  // `out` receives the lines; `sla` (may be null) is checked on every span and outlives this.
  LiveReport(LiveReportOptions options, std::ostream& out, SlaChecker* sla);

  // One clock interval (start_ns, end_ns] in epoch ns; `planned_bytes` is the run's total (0 if
  // time-based). Emits a line when end_ns is a status boundary or `final`.
  void Add(uint64_t start_ns, uint64_t end_ns, bool final, uint64_t planned_bytes,
           std::span<const RecorderSnapshot> deltas);
  // IntervalSink: the same, from the interval clock.
  void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) override {
    origin_ns_ = info.origin_ns;
    Add(info.start_ns, info.end_ns, info.final, info.planned_bytes, deltas);
  }

  uint64_t lines() const { return lines_; }
  uint64_t violating_spans() const { return violating_spans_; }

 private:
  // Checks and counts the span; prints its line(s) when `print` (and the format prints).
  void Emit(uint64_t end_ns, bool final, uint64_t planned_bytes, bool print);
  void EmitJson(double elapsed, double seconds, bool final, uint64_t planned_bytes,
                const std::vector<std::string>& violated);
  void EmitText(double elapsed, double seconds, uint64_t planned_bytes,
                const std::vector<std::string>& violated);
  void DrawStatus(uint64_t end_ns, uint64_t planned_bytes, std::span<const RecorderSnapshot> deltas,
                  double seconds);
  std::string Progress(double elapsed, uint64_t planned_bytes) const;

  LiveReportOptions options_;
  std::ostream& out_;
  SlaChecker* sla_;
  uint64_t origin_ns_ = 0;  // the clock's boundaries' origin (IntervalInfo::origin_ns)
  RecorderSnapshot span_;
  bool span_open_ = false;
  uint64_t span_start_ns_ = 0;
  uint64_t bytes_done_ = 0;
  uint64_t lines_ = 0;
  uint64_t violating_spans_ = 0;
  bool status_shown_ = false;
};

}  // namespace iotail::stats
