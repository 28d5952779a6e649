// The inputs of `iotail compare`: each side (A or B) is one argument, `REP[,REP...]`, a list of
// repetitions of a run, each `FILE[+FILE...]`, the files that together hold one repetition (the
// histogram logs of its jobs, say). A file is either a fio-format histogram log (what `pctiles`
// reads: fio's or iotail's clat or lat logs) or a JSON run summary with histogram bins (`iotail run
// --output-format=json+`, or fio's json+), whose jobs' (or iotail_aggregate's) clat_ns bins (or
// lat_ns with SummaryLatency::kLat) are summed per direction. A plain JSON summary has no bins and
// is refused, naming the file. Each repetition's whole-run histograms (exact integer counts) are
// kept per direction.
//
// Errors (exit 2): UsageError naming the file (missing, unreadable, empty, JSON without bins, mixed
// generations) or LogFormatError naming its line. Not thread-safe; plain data.
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

// One repetition: per direction its histogram, nullopt where it has no samples.
struct RepetitionHistograms {
  std::array<std::optional<stats::Histogram>, stats::kDirectionCount> dirs;
};

struct CompareSide {
  std::string input;  // the argument as given
  stats::HistogramLayout layout = stats::HistogramLayout::Fio3();
  std::vector<RepetitionHistograms> repetitions;
};

enum class SummaryLatency { kClat, kLat };

// Reads one side; `label` ("A" or "B") names it in messages.
CompareSide LoadCompareSide(std::string_view input, std::string_view label, SummaryLatency latency);

// Brings both sides' histograms to one layout: the coarsest coarseness and the fewer groups of the
// two (counts above the smaller top are folded into its last bucket, as fio's clamp). fio 2 against
// fio 3 logs is a UsageError.
void ToCommonLayout(CompareSide& a, CompareSide& b);

}  // namespace iotail::cli
