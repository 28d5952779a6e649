// The inputs of `iotail compare`: each side (A or B) is one argument, `REP[,REP...]`, a list of
// repetitions of a run, each `FILE[+FILE...]`, the files that together hold one repetition (the
// histogram logs of its jobs, say). A file is either a fio-format histogram log (what `pctiles`
// reads: fio's or iotail's clat or lat logs) or a JSON run summary with histogram bins (`iotail run
// --output-format=json+`, or fio's json+), whose jobs' (or iotail_aggregate's) clat_ns bins (or
// lat_ns with kLat, iotail_olat_ns with kOlat; with kRecorded the latencies a replay's trace
// recorded, under iotail_replay) are summed per direction. Each repetition's
// whole-run histograms (exact integer counts) are kept per direction. A plain JSON summary (fio's
// --output-format=json, the file fio users have most) has no bins: of it, the percentiles it
// printed are kept, which can be compared but carry no confidence interval; since printed
// percentiles cannot be added up, such a repetition is one file with one job (or iotail's
// aggregate, or fio's group_reporting entry) per direction.
//
// Errors (exit 2): UsageError naming the file (missing, unreadable, empty, JSON with neither bins
// nor percentiles, printed percentiles of several jobs, mixed generations) or LogFormatError
// naming its line. Not thread-safe; plain data.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/histogram.h"
#include "stats/core/histogram_layout.h"

namespace iotail::cli {

// What a JSON summary without bins printed for one direction's latency.
struct PrintedPercentiles {
  std::string file;  // where they come from, for messages
  uint64_t samples = 0;
  std::vector<std::pair<double, double>> values;  // (percentile, ns), as printed
  // The value printed for `percentile`; UsageError naming the file when it was not printed.
  double At(double percentile, std::string_view label) const;
};

// One repetition: per direction its histogram, nullopt where it has no samples; or, read from a
// summary without bins, its printed percentiles (then dirs is all nullopt).
struct RepetitionHistograms {
  std::array<std::optional<stats::Histogram>, stats::kDirectionCount> dirs;
  std::array<std::optional<PrintedPercentiles>, stats::kDirectionCount> printed;
};

struct CompareSide {
  std::string input;  // the argument as given
  stats::HistogramLayout layout = stats::HistogramLayout::Fio3();
  std::vector<RepetitionHistograms> repetitions;
};

// clat_ns, lat_ns, iotail_olat_ns of the jobs; kRecorded: a replay's latencies recorded by its
// trace (iotail_replay -> DIRECTION -> recorded_ns, stats/report/replay_report.h).
enum class SummaryLatency { kClat, kLat, kOlat, kRecorded };

// Whether `path` holds JSON (a run summary) rather than a histogram log; UsageError naming `label`
// when it cannot be read or is empty.
bool IsJsonSummary(const std::string& path, std::string_view label);

// Reads one side; `label` ("A" or "B") names it in messages.
CompareSide LoadCompareSide(std::string_view input, std::string_view label, SummaryLatency latency);

// Brings both sides' histograms to one layout: the coarsest coarseness and the fewer groups of the
// two (counts above the smaller top are folded into its last bucket, as fio's clamp). fio 2 against
// fio 3 logs is a UsageError.
void ToCommonLayout(CompareSide& a, CompareSide& b);

}  // namespace iotail::cli
